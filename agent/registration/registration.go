package registration

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
)

// Config configures a Registration.
type Config struct {
	// ClusterName is the managed cluster's name on the hub.
	ClusterName string
	// AgentID names this agent; empty reuses the stored one or makes one up.
	AgentID string
	// Namespace is the agent's namespace on the spoke, where the bootstrap
	// and hub kubeconfig secrets are.
	Namespace string
	// Spoke is a client of the managed cluster.
	Spoke kubernetes.Interface
	// BootstrapKubeconfig is a kubeconfig file to join with; empty reads
	// Secret BootstrapSecretName in Namespace.
	BootstrapKubeconfig string
	// ClientConfig is what the agent reports in
	// spec.managedClusterClientConfigs: the spoke API server and its CA.
	ClientConfig clusterv1.ClientConfig
	// LeaseDurationSeconds goes into a new ManagedCluster; 0 means 60.
	LeaseDurationSeconds int32
	// CertificateExpiration is asked for in CSRs; 0 lets the signer decide.
	CertificateExpiration time.Duration
	// RenewBefore, when set, renews the certificate that long before it
	// expires instead of when 20–25 % of its life is left.
	RenewBefore time.Duration
	// HubServers are further addresses (host:port) of the hub, members of
	// one hub whose serving certificates also name the hub kubeconfig's
	// server: the agent dials them when that server does not answer.
	HubServers []string
	// SessionFuncs are started with each hub session, each in a goroutine
	// of its own; their context ends with the session (the credentials
	// stopped being usable, or Run ends), and the next session starts them
	// again. They retry their own failures: a session never ends for them.
	SessionFuncs []func(ctx context.Context, s HubSession)
}

// Registration keeps a managed cluster registered with its hub. Run it, and
// add its status controller to the spoke's manager with SetupWithManager.
type Registration struct {
	cfg Config
	// me is known once Run has read the spoke's identity.
	me self
	// current is the session while the agent holds usable credentials.
	current atomic.Pointer[session]
	// leaseSeconds is the ManagedCluster's spec.leaseDurationSeconds as last read.
	leaseSeconds atomic.Int32
	// wake asks the status controller to look again: a session started,
	// or its watch saw the ManagedCluster appear, take another lease
	// duration or go.
	wake chan event.GenericEvent
}

// New returns a Registration for cfg.
func New(cfg Config) *Registration {
	r := &Registration{cfg: cfg, wake: make(chan event.GenericEvent, 1)}
	r.leaseSeconds.Store(cfg.LeaseDurationSeconds)
	return r
}

// scheme holds the types the agent exchanges with the hub.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clusterv1.AddToScheme(s))
	return s
}()

// newHubClient returns a client for the agent's ManagedCluster. Its mapping
// is fixed, so that it never needs discovery, whose errors would hide why a
// request failed.
func newHubClient(cfg *rest.Config) (client.WithWatch, error) {
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(clusterv1.GroupVersion.WithKind("ManagedCluster"), meta.RESTScopeRoot)
	return client.NewWithWatch(cfg, client.Options{Scheme: scheme, Mapper: mapper})
}

// wakeStatus asks the status controller to look again, unless it has a
// wake-up to handle already.
func (r *Registration) wakeStatus() {
	select {
	case r.wake <- event.GenericEvent{Object: &clusterv1.ManagedCluster{}}:
	default:
	}
}

// Run keeps the cluster registered until ctx ends: it uses the stored hub
// credentials while they are usable, and joins with the bootstrap
// kubeconfig when they are not. It returns nil when ctx ends.
func (r *Registration) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	if err := retry(ctx, "Cannot read this cluster's identity; retrying", r.identify); err != nil {
		return nil
	}
	logger.Info("Registering with the hub", "agentID", r.me.agentID, "clusterID", r.me.clusterID)
	var creds *Credentials
	err := retry(ctx, "Cannot read the stored hub credentials; retrying", func(ctx context.Context) error {
		var (
			reason string
			err    error
		)
		creds, reason, err = r.stored(ctx)
		if creds == nil && err == nil {
			logger.Info("Joining the hub with the bootstrap kubeconfig", "reason", reason)
		}
		return err
	})
	if err == nil && creds == nil {
		creds, err = r.join(ctx)
	}
	for err == nil {
		// Holding a certificate of its own, the agent needs the join token
		// no more, and nobody else should find it on the cluster.
		if err := r.removeBootstrapCredentials(ctx); err != nil {
			logger.Info("Cannot remove the join token from the bootstrap kubeconfig; trying again with the next session", "reason", err.Error())
		}
		// A session ends only when its credentials are no longer usable.
		reason := r.serve(ctx, creds)
		if ctx.Err() != nil {
			break
		}
		logger.Info("Hub credentials are no longer usable; joining again with the bootstrap kubeconfig", "reason", reason.Error())
		creds, err = r.join(ctx)
	}
	return nil
}

// identify reads kube-system's UID, the cluster's id, and settles the agent id.
func (r *Registration) identify(ctx context.Context) error {
	ns, err := r.cfg.Spoke.CoreV1().Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("read namespace %s: %w", metav1.NamespaceSystem, err)
	}
	id := r.cfg.AgentID
	if id == "" {
		st, err := readSecret(ctx, r.cfg.Spoke, r.cfg.Namespace)
		if err != nil {
			return err
		}
		if st.clusterName == r.cfg.ClusterName {
			id = st.agentID
		}
	}
	if id == "" {
		id = utilrand.String(10)
	}
	r.me = self{clusterID: string(ns.UID), client: r.cfg.ClientConfig, agentID: id}
	return nil
}

// stored returns the stored credentials, or nil and why they are not usable.
func (r *Registration) stored(ctx context.Context) (*Credentials, string, error) {
	st, err := readSecret(ctx, r.cfg.Spoke, r.cfg.Namespace)
	switch {
	case err != nil:
		return nil, "", err
	case st.invalid != nil:
		return nil, "the stored credentials are not usable: " + st.invalid.Error(), nil
	case st.creds == nil:
		return nil, "no hub credentials are stored yet", nil
	}
	// A bootstrap kubeconfig that now names another hub or CA means the
	// cluster moved; without one (removed after joining) the credentials stand.
	var hub *clientcmdapi.Cluster
	b, err := r.loadBootstrap(ctx)
	switch {
	case err == nil:
		hub = b.hub
	case !errors.Is(err, errNoBootstrap):
		return nil, "", err
	}
	if err := st.creds.usable(time.Now(), r.cfg.ClusterName, r.me.agentID, hub); err != nil {
		return nil, "the stored credentials are not usable: " + err.Error(), nil
	}
	return st.creds, "", nil
}

// retry calls f until it succeeds, logging msg and why in one line after
// each failure and waiting longer each time, up to a minute. It returns
// ctx's error when ctx ends first.
func retry(ctx context.Context, msg string, f func(context.Context) error) error {
	backoff := newBackoff(time.Minute)
	for {
		err := f(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		d := backoff.Step()
		klog.FromContext(ctx).Info(msg, "reason", err.Error(), "retryIn", d.Round(time.Millisecond))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
		}
	}
}

// newBackoff waits a second at first, twice as long after each failure, up to limit.
func newBackoff(limit time.Duration) *wait.Backoff {
	return &wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.1, Steps: math.MaxInt32, Cap: limit}
}
