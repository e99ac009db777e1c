package framework

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/hub"
	"github.com/flotilla-io/flotilla/hub/controlplane"
)

// Role says what a control plane is for.
type Role int

const (
	// Hub control planes serve Flotilla's CRDs and cluster-info, and run
	// the hub controllers.
	Hub Role = iota
	// Spoke control planes are plain clusters for agents to manage.
	Spoke
	// HubAPI control planes are hubs without the hub controllers: the
	// "existing cluster" that flotilla-hub processes started with
	// --kubeconfig run the controllers against.
	HubAPI
)

// ControlPlane is a control plane started in this process.
type ControlPlane struct {
	*controlplane.ControlPlane
	// Client is a controller-runtime client with cluster-admin rights.
	Client client.Client
	// Kube is a client-go clientset with cluster-admin rights.
	Kube kubernetes.Interface
	// Dir is the data directory.
	Dir  string
	role Role
	// Proxy is the hub's cluster proxy (hubs only).
	Proxy *hub.ClusterProxy
	// Requests counts the API server's requests by user (hubs only).
	Requests *RequestLog
	// stopManager stops the hub controllers and cluster proxy (hubs only).
	stopManager func()
	// hubOptions are what the hub started with, again at Resume.
	hubOptions []HubOption
}

// HubOption changes how a hub control plane starts: its API server's
// options and its controllers'.
type HubOption func(cp *controlplane.Options, h *hub.Options)

// StartHub starts a hub control plane as Start does, with opts.
func StartHub(ctx context.Context, opts ...HubOption) (*ControlPlane, error) {
	return start(ctx, Hub, opts)
}

// Start starts a control plane in a new temporary data directory.
//
// A free port is found by binding and releasing it, so another process
// of a busy machine may take it before the API server or etcd binds it:
// such a start is tried again, in a new directory, a few times.
func Start(ctx context.Context, role Role) (*ControlPlane, error) {
	return start(ctx, role, nil)
}

func start(ctx context.Context, role Role, hubOptions []HubOption) (*ControlPlane, error) {
	for attempt := 1; ; attempt++ {
		dir, err := os.MkdirTemp("", "flotilla-test-")
		if err != nil {
			return nil, err
		}
		cp, err := startIn(ctx, role, dir, 0, hubOptions)
		if err == nil {
			return cp, nil
		}
		os.RemoveAll(dir)
		if attempt == 3 || !errors.Is(err, syscall.EADDRINUSE) && !strings.Contains(err.Error(), "address already in use") {
			return nil, err
		}
	}
}

// StartIn starts a control plane on an existing data directory, as a
// restart does.
func StartIn(ctx context.Context, role Role, dir string) (*ControlPlane, error) {
	return startIn(ctx, role, dir, 0, nil)
}

// startIn starts a control plane on dir, serving on port (0: a free one).
func startIn(ctx context.Context, role Role, dir string, port int, hubOptions []HubOption) (*ControlPlane, error) {
	opts := controlplane.Options{DataDir: dir, SecurePort: port}
	proxyCtx, stopProxy := context.WithCancel(context.WithoutCancel(ctx))
	var clusterProxy *hub.ClusterProxy
	var requests *RequestLog
	if role == Hub || role == HubAPI {
		clusterProxy = hub.NewClusterProxy(proxyCtx)
		requests = newRequestLog()
		opts = hub.ControlPlaneOptions(opts)
		opts.Authorizer = requests.authorizer(opts.Authorizer)
		opts = clusterProxy.Serve(opts)
	}
	hubOpts := hub.Options{MetricsAddr: "0", HealthProbeAddr: "0", Proxy: clusterProxy}
	for _, o := range hubOptions {
		o(&opts, &hubOpts)
	}
	cp, err := controlplane.Start(ctx, opts)
	if err != nil {
		stopProxy()
		return nil, err
	}
	c := &ControlPlane{ControlPlane: cp, Dir: dir, role: role, stopManager: stopProxy, Proxy: clusterProxy, Requests: requests, hubOptions: hubOptions}
	if role == HubAPI {
		if err := hub.Prepare(ctx, cp.Config, cp.URL); err != nil {
			stopProxy()
			cp.Stop()
			return nil, fmt.Errorf("prepare hub: %w", err)
		}
	}
	if role == Hub {
		if err := hub.Prepare(ctx, cp.Config, cp.URL); err != nil {
			cp.Stop()
			return nil, fmt.Errorf("prepare hub: %w", err)
		}
		// Each hub serves its ManifestWork admission webhook on a port of its own.
		webhook, err := hub.EmbeddedWebhook(cp, hub.WebhookOptions{})
		if err != nil {
			cp.Stop()
			return nil, fmt.Errorf("prepare the hub's webhook server: %w", err)
		}
		mgrCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		hubOpts.Webhook = webhook
		done, err := hub.StartManager(mgrCtx, cp.Config, hubOpts)
		if err != nil {
			cancel()
			stopProxy()
			cp.Stop()
			return nil, fmt.Errorf("start hub controllers: %w", err)
		}
		c.stopManager = func() { cancel(); <-done; stopProxy() }
	}
	if c.Client, err = client.New(cp.Config, client.Options{Scheme: hub.Scheme()}); err != nil {
		cp.Stop()
		return nil, err
	}
	if c.Kube, err = kubernetes.NewForConfig(cp.Config); err != nil {
		cp.Stop()
		return nil, err
	}
	return c, nil
}

// Restart stops the control plane and starts it again on the same data
// directory and port, so that its clients (agents) find it again.
func (c *ControlPlane) Restart(ctx context.Context) (*ControlPlane, error) {
	c.Halt()
	return c.Resume(ctx)
}

// Halt stops the control plane as an outage does: its data directory and
// port stay for Resume. Stop a halted control plane only after Resume.
func (c *ControlPlane) Halt() {
	c.stopManager()
	c.ControlPlane.Stop()
}

// Resume starts a halted control plane again on the same data directory
// and port, and returns it.
func (c *ControlPlane) Resume(ctx context.Context) (*ControlPlane, error) {
	u, err := url.Parse(c.URL)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		return nil, fmt.Errorf("the control plane's URL %s has no port: %w", c.URL, err)
	}
	return startIn(ctx, c.role, c.Dir, port, c.hubOptions)
}

// Stop stops the control plane and removes its data directory.
func (c *ControlPlane) Stop() {
	c.stopManager()
	c.ControlPlane.Stop()
	os.RemoveAll(c.Dir)
}

// ConfigFor returns a client configuration for this control plane with
// the given credentials and no others.
func (c *ControlPlane) ConfigFor(certPEM, keyPEM []byte, token string) *rest.Config {
	return &rest.Config{
		Host:            c.URL,
		TLSClientConfig: rest.TLSClientConfig{CAData: c.CAData, CertData: certPEM, KeyData: keyPEM},
		BearerToken:     token,
	}
}
