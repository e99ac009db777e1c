package controlplane

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/spf13/pflag"
	"k8s.io/component-base/configz"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app/options"
)

// HubControllers are the kube-controller-manager controllers a hub needs:
// signing agents' client certificates, deleting namespaces, collecting
// garbage, service accounts and their tokens, bootstrap tokens (signing
// cluster-info, removing expired tokens), aggregated cluster roles and the
// root CA ConfigMap in every namespace.
var HubControllers = []string{
	"certificatesigningrequest-signing-controller",
	"certificatesigningrequest-cleaner-controller",
	"namespace-controller",
	"garbage-collector-controller",
	"serviceaccount-controller",
	"serviceaccount-token-controller",
	"bootstrap-signer-controller",
	"token-cleaner-controller",
	"clusterrole-aggregation-controller",
	"root-ca-certificate-publisher-controller",
}

// configzMu serialises the start of controller managers in one process (the
// test harness starts several): each registers a process-global configz
// entry, which may exist only once at a time.
var configzMu sync.Mutex

// controllerManagerArgs are the kube-controller-manager flags of an embedded control plane.
func controllerManagerArgs(p *pki, kubeconfig string, controllers []string) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--controllers=" + strings.Join(controllers, ","),
		"--leader-elect=false",
		"--secure-port=0",
		"--use-service-account-credentials=false",
		"--cluster-signing-cert-file=" + p.path(caCertFile),
		"--cluster-signing-key-file=" + p.path(caKeyFile),
		"--service-account-private-key-file=" + p.path(saKeyFile),
		"--root-ca-file=" + p.path(caCertFile),
	}
}

// runControllerManager configures a kube-controller-manager from flags and
// runs it until ctx ends. The returned channel behaves as runAPIServer's.
func runControllerManager(ctx context.Context, args []string) (<-chan error, error) {
	s, err := options.NewKubeControllerManagerOptions()
	if err != nil {
		return nil, err
	}
	fs := pflag.NewFlagSet("kube-controller-manager", pflag.ContinueOnError)
	for _, f := range s.Flags(app.KnownControllers(), app.ControllersDisabledByDefault(), app.ControllerAliases()).FlagSets {
		fs.AddFlagSet(f)
	}
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("kube-controller-manager flags: %w", err)
	}
	if err := s.ComponentGlobalsRegistry.Set(); err != nil {
		return nil, err
	}
	cfg, err := s.Config(ctx, app.KnownControllers(), app.ControllersDisabledByDefault(), app.ControllerAliases())
	if err != nil {
		return nil, fmt.Errorf("kube-controller-manager options: %w", err)
	}
	// A controller manager registers a process-global configz entry at the
	// start of Run; drop the one of an earlier manager in this process. The
	// caller holds configzMu until this manager is seen running.
	configz.Delete(app.ConfigzName)
	done := make(chan error, 1)
	go func() {
		defer close(done)
		if err := app.Run(ctx, cfg.Complete()); err != nil {
			done <- err
		}
	}()
	return done, nil
}
