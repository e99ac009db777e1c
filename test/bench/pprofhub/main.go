// Command pprofhub is flotilla-hub for the benchmarks: the same hub.Run
// (or its two halves in two processes), serving net/http/pprof on a free
// loopback port whose address it writes to <data-dir>/pprof.addr. The
// release binary serves no pprof, and cannot tell the CPU of its
// controllers from that of its API server and etcd; this one can, with
//
//	--mode all           # hub.Run: API server, etcd and controllers (as flotilla-hub)
//	--mode controlplane  # API server and etcd (and the hub's kube controllers) only
//	--mode controllers   # the hub controllers against --kubeconfig
//
// A controlplane process writes <data-dir>/webhook.json, the webhook
// serving options its controllers process then uses (--webhook-config), so
// that ManifestWorks are admitted as in the embedded hub.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof" // the point of this binary
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/flotilla-io/flotilla/hub"
	"github.com/flotilla-io/flotilla/hub/controlplane"
	"github.com/flotilla-io/flotilla/internal/memlimit"
)

// readyLine is what framework.StartHubProcess waits for, as flotilla-hub prints it.
const readyLine = "flotilla-hub is ready at %s\n"

func main() {
	var (
		mode, kubeconfig, webhookConfig string
		opts                            = hub.Options{LeaderElect: true}
	)
	// controller-runtime defines --kubeconfig on the global flag set.
	fs := flag.NewFlagSet(os.Args[0], flag.ExitOnError)
	fs.StringVar(&mode, "mode", "all", "all, controlplane or controllers")
	fs.StringVar(&opts.ControlPlane.DataDir, "data-dir", "", "as flotilla-hub --data-dir (also where pprof.addr is written)")
	fs.StringVar(&opts.ControlPlane.BindAddress, "bind-address", "127.0.0.1", "as flotilla-hub")
	fs.IntVar(&opts.ControlPlane.SecurePort, "secure-port", 6443, "as flotilla-hub")
	fs.StringVar(&opts.MetricsAddr, "metrics-bind-address", "0", "as flotilla-hub")
	fs.StringVar(&opts.HealthProbeAddr, "health-probe-bind-address", "0", "as flotilla-hub")
	fs.StringVar(&kubeconfig, "kubeconfig", "", "controllers mode: the control plane's admin kubeconfig")
	fs.StringVar(&webhookConfig, "webhook-config", "", "controllers mode: the webhook.json a controlplane process wrote")
	fs.BoolVar(&opts.LeaderElect, "leader-elect", true, "as flotilla-hub")
	cacheWorks := fs.Bool("watch-cache-manifestworks", false, "as flotilla-hub")
	fs.Func("memory-limit", "as flotilla-hub", func(s string) error {
		q, err := resource.ParseQuantity(s)
		opts.MemoryLimit = q.Value()
		return err
	})
	fs.IntVar(&opts.GCPercent, "gc-percent", 0, "as flotilla-hub")
	_ = fs.Parse(os.Args[1:])
	if *cacheWorks {
		opts.ControlPlane.Uncached = []schema.GroupResource{}
	}
	// hub.Run sets them too; the halves of split mode do not all call it.
	memlimit.Set(opts.MemoryLimit)
	memlimit.SetGCPercent(opts.GCPercent)
	ctrl.SetLogger(klog.NewKlogr())
	ctx := ctrl.SetupSignalHandler()
	if err := run(ctx, mode, kubeconfig, webhookConfig, opts); err != nil {
		fmt.Fprintln(os.Stderr, "pprofhub:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, mode, kubeconfig, webhookConfig string, opts hub.Options) error {
	if opts.ControlPlane.DataDir == "" {
		return fmt.Errorf("--data-dir is required: pprof.addr is written there")
	}
	if err := os.MkdirAll(opts.ControlPlane.DataDir, 0o700); err != nil {
		return err
	}
	if err := servePprof(filepath.Join(opts.ControlPlane.DataDir, "pprof.addr")); err != nil {
		return err
	}
	switch mode {
	case "all":
		opts.Ready = func(info hub.Info) { fmt.Fprintf(os.Stderr, readyLine, info.URL) }
		return hub.Run(ctx, opts)
	case "controlplane":
		return runControlPlane(ctx, opts)
	case "controllers":
		return runControllers(ctx, kubeconfig, webhookConfig, opts)
	}
	return fmt.Errorf("--mode %q: want all, controlplane or controllers", mode)
}

// runControlPlane is the first half of hub.Run: the control plane, what
// the hub installs into it, and the webhook's serving certificate.
func runControlPlane(ctx context.Context, opts hub.Options) error {
	cp, err := controlplane.Start(ctx, hub.ControlPlaneOptions(opts.ControlPlane))
	if err != nil {
		return err
	}
	defer cp.Stop()
	webhook, err := hub.EmbeddedWebhook(cp, opts.Webhook)
	if err != nil {
		return err
	}
	b, err := json.Marshal(webhook)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(opts.ControlPlane.DataDir, "webhook.json"), b, 0o600); err != nil {
		return err
	}
	if err := hub.Prepare(ctx, cp.Config, cp.URL); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, readyLine, cp.URL)
	select {
	case <-ctx.Done():
		return nil
	case err := <-cp.Failed():
		return err
	}
}

// runControllers is the second half of hub.Run: the hub's controllers and
// webhook against the control plane of kubeconfig.
func runControllers(ctx context.Context, kubeconfig, webhookConfig string, opts hub.Options) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("--kubeconfig: %w", err)
	}
	// As the embedded hub's own client (hub/controlplane); client-go's
	// default of 5 requests a second would throttle the controllers.
	cfg.QPS, cfg.Burst = 200, 400
	b, err := os.ReadFile(webhookConfig)
	if err != nil {
		return fmt.Errorf("--webhook-config: %w", err)
	}
	if err := json.Unmarshal(b, &opts.Webhook); err != nil {
		return fmt.Errorf("--webhook-config %s: %w", webhookConfig, err)
	}
	done, err := hub.StartManager(ctx, cfg, opts)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, readyLine, cfg.Host)
	return <-done
}

// servePprof serves /debug/pprof on a free loopback port and writes its
// address to file.
func servePprof(file string) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() { _ = http.Serve(l, nil) }()
	return os.WriteFile(file, []byte(l.Addr().String()), 0o600)
}
