package hub

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/api/install"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/hub/addon/conversion"
	"github.com/flotilla-io/flotilla/hub/bootstrap"
	"github.com/flotilla-io/flotilla/hub/bootstraptoken"
	"github.com/flotilla-io/flotilla/hub/clusterset"
	"github.com/flotilla-io/flotilla/hub/controlplane"
	"github.com/flotilla-io/flotilla/hub/policy"
	"github.com/flotilla-io/flotilla/hub/proxy"
	"github.com/flotilla-io/flotilla/hub/registration"
	"github.com/flotilla-io/flotilla/hub/search"
	"github.com/flotilla-io/flotilla/hub/services"
	"github.com/flotilla-io/flotilla/hub/work"
	rsadmission "github.com/flotilla-io/flotilla/hub/workreplicaset/admission"
	"github.com/flotilla-io/flotilla/internal/kubeapply"
	"github.com/flotilla-io/flotilla/internal/memlimit"
	"github.com/flotilla-io/flotilla/manifests"
)

// Namespace is where the hub keeps its own objects (the leader lease).
const Namespace = "open-cluster-management-hub"

// Options configure a hub process.
type Options struct {
	// Kubeconfig, when set, runs the hub controllers against an existing
	// cluster instead of the embedded control plane.
	Kubeconfig string
	// ControlPlane configures the embedded control plane.
	ControlPlane controlplane.Options
	// MetricsAddr serves Prometheus /metrics; "0" turns it off.
	MetricsAddr string
	// HealthProbeAddr serves /healthz and /readyz; "0" turns it off.
	HealthProbeAddr string
	// LeaderElect makes only one of several hub processes run controllers.
	LeaderElect bool
	// Lease times the leader election; zero fields take DefaultLease's.
	Lease Lease
	// LeaderIdentity, when set, is this process's identity in the
	// election instead of a new one per process: a hub restarted (or
	// restored) on its own embedded etcd then takes back its lease at once
	// rather than wait for it to run out.
	LeaderIdentity string
	// Webhook configures the admission webhook server for ManifestWorks.
	Webhook WebhookOptions
	// Ready, if set, is called once the hub serves and its controllers run.
	Ready func(Info)
	// Proxy, when set, is the cluster proxy that the hub's API server
	// serves (see NewClusterProxy); its controller runs in the manager.
	Proxy *ClusterProxy
	// BootstrapTokens is the lifetime and overlap of the bootstrap token the
	// hub rotates itself; nil means bootstraptoken.DefaultRotation, a zero
	// Lifetime turns rotation off.
	BootstrapTokens *bootstraptoken.Rotation
	// MemoryLimit is the Go runtime's soft memory limit in bytes; 0 leaves
	// GOMEMLIMIT alone, or takes 80 % of the cgroup's limit when the hub
	// runs in one (see internal/memlimit).
	MemoryLimit int64
	// GCPercent is the Go collector's percent (GOGC); 0 leaves GOGC alone,
	// or sets memlimit.DefaultGCPercent when it is not set.
	GCPercent int
	// SearchDatabase is the multi-cluster search index of the embedded
	// control plane: empty is SQLite in its data directory, postgres://…
	// a PostgreSQL database, search.Off none (see search.Open). A hub on
	// --kubeconfig serves no search.
	SearchDatabase string
	// Search, when set, is the search endpoint whose cleanup runs in the
	// manager (Run sets it from SearchDatabase).
	Search *search.Server
}

// Info says where a running hub can be reached.
type Info struct {
	// URL is the hub API server's address.
	URL string
	// AdminKubeconfig is the admin kubeconfig's path (embedded control plane only).
	AdminKubeconfig string
	// Config is the client configuration the hub itself uses.
	Config *rest.Config
}

// Scheme returns a scheme with the Kubernetes and the OCM types.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(install.AddToScheme(s))
	return s
}

// Run starts the hub and blocks until ctx ends or a component fails. On
// return, everything it started has stopped (etcd closed cleanly).
func Run(ctx context.Context, opts Options) error {
	logger := klog.FromContext(ctx)
	started := time.Now()
	if limit, from := memlimit.Set(opts.MemoryLimit); limit > 0 {
		logger.Info("Soft memory limit set", "bytes", limit, "from", from)
	}
	percent, from := memlimit.SetGCPercent(opts.GCPercent)
	logger.Info("Garbage collector percent set", "percent", percent, "from", from)

	var (
		cfg    *rest.Config
		info   Info
		failed <-chan error
		// crdsInstalled says that the embedded control plane installed
		// the CRDs before its controller manager started.
		crdsInstalled bool
	)
	if opts.Kubeconfig != "" {
		var err error
		cfg, err = clientcmd.BuildConfigFromFlags("", opts.Kubeconfig)
		if err != nil {
			return fmt.Errorf("load --kubeconfig %s: %w", opts.Kubeconfig, err)
		}
		// client-go's default of 5 requests a second would take minutes
		// to accept a thousand clusters.
		if cfg.QPS == 0 {
			cfg.QPS, cfg.Burst = controlplane.ClientQPS, controlplane.ClientBurst
		}
		info = Info{URL: cfg.Host, Config: cfg}
		if !opts.Webhook.enabled() {
			logger.Info("Not serving the ManifestWork admission webhook: give --webhook-cert-dir and --webhook-advertise-url to serve it from this process")
		}
		if opts.SearchDatabase != search.Off {
			logger.Info("Not serving multi-cluster search: it is served by the embedded API server, which a hub on --kubeconfig does not run")
		}
	} else {
		// A webhook port that is taken fails the start at once, not after
		// the control plane has started and been stopped again.
		if err := opts.Webhook.checkGivenPort(); err != nil {
			return err
		}
		logger.Info("Starting embedded control plane", "dataDir", opts.ControlPlane.DataDir)
		opts.Proxy = NewClusterProxy(ctx)
		cpOpts := opts.ControlPlane
		// The index lives in the data directory: a directory that cannot
		// be made is said as the control plane would say it.
		if cpOpts.DataDir != "" {
			if err := controlplane.MakeDataDir(cpOpts.DataDir); err != nil {
				return err
			}
		}
		index, err := search.Open(ctx, opts.SearchDatabase, cpOpts.DataDir)
		if err != nil {
			return fmt.Errorf("open the search index: %w", err)
		}
		if index == nil {
			logger.Info("Multi-cluster search is off (--search-database off)")
		} else {
			defer index.Close()
			opts.Search = search.New(index, search.Options{})
			cpOpts.Extensions = append(cpOpts.Extensions, opts.Search.Extension())
		}
		if cpOpts.BeforeControllers == nil {
			// The CRDs installed before the controller manager need not
			// be installed again below.
			cpOpts.BeforeControllers = func(ctx context.Context, cfg *rest.Config) error {
				err := installCRDs(ctx, cfg)
				crdsInstalled = err == nil
				return err
			}
		}
		cp, err := controlplane.Start(ctx, opts.Proxy.Serve(ControlPlaneOptions(cpOpts)))
		if err != nil {
			return err
		}
		defer cp.Stop()
		cfg, failed = cp.Config, cp.Failed()
		if len(opts.ControlPlane.EtcdServers) == 0 && opts.LeaderIdentity == "" {
			// The identity is kept in the data directory, which the lock
			// keeps to this process: one identity per process, also when
			// the embedded etcd is a member of a cluster (each member has
			// its own data directory).
			if opts.LeaderIdentity, err = controlplane.HubIdentity(opts.ControlPlane.DataDir); err != nil {
				return err
			}
		}
		info = Info{URL: cp.URL, AdminKubeconfig: cp.AdminKubeconfig, Config: cfg}
		if opts.Webhook, err = EmbeddedWebhook(cp, opts.Webhook); err != nil {
			return err
		}
	}

	// A component that fails while this process prepares or stands by
	// ends it as when it leads: a member whose etcd was removed from its
	// cluster must not keep serving errors.
	runCtx, stopRun := context.WithCancelCause(ctx)
	defer stopRun(nil)
	go func() {
		select {
		case err := <-failed:
			stopRun(err)
		case <-runCtx.Done():
		}
	}()
	failure := func(err error) error {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			// Asked to stop while preparing or standing by: a clean stop.
			return nil
		}
		if ctx.Err() == nil && runCtx.Err() != nil {
			return context.Cause(runCtx)
		}
		return err
	}
	if err := prepareRetrying(runCtx, cfg, info.URL, !crdsInstalled); err != nil {
		return failure(err)
	}
	mgrDone, err := StartManager(runCtx, cfg, opts)
	if err != nil {
		return failure(err)
	}
	logger.Info("Hub ready", "url", info.URL, "adminKubeconfig", info.AdminKubeconfig, "startup", time.Since(started).Round(time.Millisecond))
	if opts.Ready != nil {
		opts.Ready(info)
	}
	select {
	case err := <-mgrDone:
		return failure(err)
	case <-runCtx.Done():
		if ctx.Err() != nil {
			return <-mgrDone
		}
		return context.Cause(runCtx)
	}
}

// StartManager starts the hub controllers against cfg and returns once their
// caches are in sync and this process leads (opts.LeaderElect). Before it
// waits for leadership, when opts.Webhook names a certificate, it serves the
// ManifestWork admission webhook and registers it with the API server: a
// standby serves it too. The returned channel yields the manager's result
// when ctx ends or the manager fails.
func StartManager(ctx context.Context, cfg *rest.Config, opts Options) (<-chan error, error) {
	if err := opts.Webhook.complete(); err != nil {
		return nil, err
	}
	if opts.Webhook.enabled() {
		if err := opts.Webhook.checkListen(); err != nil {
			return nil, err
		}
		opts.Webhook.registered = new(atomic.Bool)
	}
	mgr, err := newManager(cfg, opts)
	if err != nil {
		return nil, err
	}
	if err := setupControllers(mgr, opts); err != nil {
		return nil, err
	}
	if opts.Proxy != nil {
		if err := proxy.Setup(mgr, opts.Proxy.Server, opts.Proxy.handler); err != nil {
			return nil, fmt.Errorf("set up the cluster proxy: %w", err)
		}
	}
	if opts.Search != nil {
		if err := opts.Search.Setup(mgr); err != nil {
			return nil, fmt.Errorf("set up search: %w", err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	// Every replica serves the webhook, leader or not (it needs no
	// leadership: it only reads the request), and registers the one
	// address that all replicas share, so that ManifestWorks can be written
	// while no process leads.
	if opts.Webhook.enabled() {
		if err := startWebhook(ctx, cfg, mgr, &opts.Webhook, done); err != nil {
			return nil, err
		}
	}
	if opts.LeaderElect {
		select {
		case <-mgr.Elected():
		case <-time.After(2 * time.Second):
			klog.FromContext(ctx).Info("Another hub process leads; standing by until it stops", "lease", Namespace+"/flotilla-hub",
				"leaseDuration", opts.Lease.complete().Duration, "retryPeriod", opts.Lease.complete().RetryPeriod)
		}
	}
	select {
	case <-mgr.Elected():
	case err := <-done:
		return nil, fmt.Errorf("hub manager: %w", err)
	case <-ctx.Done():
		// Stopped while standing by: the manager stops before the API
		// server it reads.
		<-done
		return nil, ctx.Err()
	}
	if opts.LeaderElect {
		klog.FromContext(ctx).Info("Leading: running the hub controllers", "lease", Namespace+"/flotilla-hub")
	}
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return nil, errors.New("hub manager caches did not sync")
	}
	return done, nil
}

// Prepare installs what every hub needs before its controllers run: the CRDs,
// cluster-info, the hub namespace, the cluster sets it keeps, the bootstrap
// ServiceAccount and RBAC, and the registration RBAC and admission policy.
// It is idempotent.
func Prepare(ctx context.Context, cfg *rest.Config, url string) error {
	return prepare(ctx, cfg, url, true)
}

// prepare is Prepare, with the CRDs only when withCRDs.
func prepare(ctx context.Context, cfg *rest.Config, url string, withCRDs bool) error {
	if withCRDs {
		if err := installCRDs(ctx, cfg); err != nil {
			return err
		}
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	caData, err := caBundle(cfg)
	if err != nil {
		return err
	}
	if err := bootstrap.PublishClusterInfo(ctx, client, url, caData); err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", Namespace, err)
	}
	if err := clusterset.Install(ctx, client); err != nil {
		return err
	}
	if err := installKeptSets(ctx, cfg); err != nil {
		return err
	}
	if err := bootstraptoken.Install(ctx, client); err != nil {
		return err
	}
	if err := services.Install(ctx, client); err != nil {
		return err
	}
	return registration.Install(ctx, client)
}

// installKeptSets creates the cluster sets the hub keeps before it says
// that it is ready: `flotilla clusterset bind global` right after the
// start must find them.
func installKeptSets(ctx context.Context, cfg *rest.Config) error {
	c, err := client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		return err
	}
	return clusterset.InstallKeptSets(ctx, c)
}

// prepareRetrying runs prepare until it succeeds, retrying what another
// writer or a busy server caused: the members of a hub on an etcd cluster
// start together and install the same objects at once.
func prepareRetrying(ctx context.Context, cfg *rest.Config, url string, withCRDs bool) error {
	backoff := wait.Backoff{Steps: 8, Duration: 500 * time.Millisecond, Factor: 2, Jitter: 0.2, Cap: 15 * time.Second}
	var err error
	for backoff.Steps > 0 {
		if err = prepare(ctx, cfg, url, withCRDs); err == nil || !(apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err) ||
			apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) || etcdElection(err)) {
			return err
		}
		klog.FromContext(ctx).Info("Preparing the hub's API objects again", "reason", err.Error())
		select {
		case <-ctx.Done():
			return err
		case <-time.After(backoff.Step()):
		}
	}
	return err
}

// etcdElection says that err is a write that failed while the members of
// the hub's etcd cluster elected a leader (one died, or joined): sent again
// once they have, it succeeds.
func etcdElection(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "etcdserver: request timed out") || strings.Contains(msg, "etcdserver: leader changed") || strings.Contains(msg, "etcdserver: no leader")
}

// bootstrapTokens is the rotation o asks for, or the default.
func (o Options) bootstrapTokens() bootstraptoken.Rotation {
	if o.BootstrapTokens == nil {
		return bootstraptoken.DefaultRotation
	}
	return *o.BootstrapTokens
}

func newManager(cfg *rest.Config, opts Options) (mgr manager.Manager, err error) {
	lease := opts.Lease.complete()
	mgrOpts := ctrl.Options{
		Scheme: Scheme(),
		// Tests run several hubs in one process, while controller names are
		// checked for uniqueness per process (they label the metrics).
		Controller:              config.Controller{SkipNameValidation: ptr.To(true)},
		Metrics:                 metricsserver.Options{BindAddress: opts.MetricsAddr},
		Cache:                   cacheOptions(),
		HealthProbeBindAddress:  opts.HealthProbeAddr,
		LeaderElection:          opts.LeaderElect,
		LeaderElectionID:        "flotilla-hub",
		LeaderElectionNamespace: Namespace,
		// A hub handing over to another process releases its lease at once.
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 ptr.To(lease.Duration),
		RenewDeadline:                 ptr.To(lease.RenewDeadline),
		RetryPeriod:                   ptr.To(lease.RetryPeriod),
	}
	if opts.LeaderElect && opts.LeaderIdentity != "" {
		if mgrOpts.LeaderElectionResourceLockInterface, err = leaseLock(cfg, opts.LeaderIdentity); err != nil {
			return nil, err
		}
	}
	if opts.Webhook.enabled() {
		if mgrOpts.WebhookServer, err = opts.Webhook.server(); err != nil {
			return nil, err
		}
	}
	mgr, err = ctrl.NewManager(cfg, mgrOpts)
	if err != nil {
		return nil, fmt.Errorf("create hub manager: %w", err)
	}
	if opts.Webhook.enabled() {
		work.SetupWebhook(mgr)
		policy.SetupWebhook(mgr)
		rsadmission.SetupWebhook(mgr)
		mgr.GetWebhookServer().Register(conversion.Path, conversion.Handler{})
		if err := mgr.AddReadyzCheck("webhook", webhookReady(&opts.Webhook, mgr.GetWebhookServer().StartedChecker())); err != nil {
			return nil, err
		}
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("cache", func(req *http.Request) error {
		if !mgr.GetCache().WaitForCacheSync(req.Context()) {
			return errors.New("informer caches not synced")
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return mgr, nil
}

// cacheOptions keep the managed fields out of the hub's cache: the
// controllers do not read them, and at thousands of clusters each cached
// ManagedCluster, replicated Policy, RoleBinding or ClusterProfile would
// carry a copy. PlacementDecisions keep theirs: the replica-set controller
// reads when a decision last changed from them.
func cacheOptions() cache.Options {
	keep := func(o any) (any, error) { return o, nil }
	return cache.Options{
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject:         map[client.Object]cache.ByObject{&clusterv1beta1.PlacementDecision{}: {Transform: keep}},
	}
}

// caBundle returns the CA data that agents need to trust the hub.
func caBundle(cfg *rest.Config) ([]byte, error) {
	if len(cfg.CAData) > 0 {
		return cfg.CAData, nil
	}
	if cfg.CAFile != "" {
		return os.ReadFile(cfg.CAFile)
	}
	return nil, errors.New("the hub's kubeconfig names no certificate authority: agents could not verify the hub")
}

// ControlPlaneOptions are o as the hub runs its embedded control plane:
// with registration's authorizer for the clusters' agents in front of
// RBAC and its check of their CSRs' subjects, and UncachedResources
// without a watch cache, unless o names others (an empty Uncached, not
// nil, keeps every resource in the watch cache).
func ControlPlaneOptions(o controlplane.Options) controlplane.Options {
	if o.Uncached == nil {
		o.Uncached = UncachedResources
	}
	if o.Authorizer == nil {
		o.Authorizer = registration.NewAuthorizer
	}
	if o.Admission == nil {
		o.Admission = registration.NewCSRSubjectAdmission()
	}
	if o.BeforeControllers == nil {
		// A new hub's garbage collector would otherwise not see the
		// ManagedClusters for 30 s, and read the RoleBindings they own
		// again and again, thinking their owner unknown.
		o.BeforeControllers = installCRDs
	}
	return o
}

// UncachedResources are the custom resources the embedded API server
// serves from etcd without a watch cache: ManifestWorks, of which a fleet
// holds ten or more per cluster, each watched by its cluster's agent only,
// in its own namespace. The watch cache would hold every one as
// unstructured maps (managed fields included) and a history of their
// recent versions: 1.0 GiB of the hub's 2.3 GiB live heap at 5,000
// clusters with 10 works each (docs/benchmarks.md, "Hub settings").
// Without it each change of a work is decoded once per watch that selects
// it, more CPU while works churn, and each namespace's list is read from
// etcd.
var UncachedResources = []schema.GroupResource{{Group: workv1.GroupName, Resource: "manifestworks"}}

// installCRDs installs the hub's CRDs and waits until they are served.
func installCRDs(ctx context.Context, cfg *rest.Config) error {
	crds, err := manifests.AllCRDs()
	if err != nil {
		return err
	}
	return kubeapply.InstallCRDs(ctx, cfg, crds)
}

// ClusterProxy is the hub's cluster proxy (hub/proxy): the clusters'
// tunnels, served by the embedded API server.
type ClusterProxy struct {
	// Server holds the open tunnels.
	Server  *proxy.Server
	handler *proxy.Handler
}

// NewClusterProxy returns a cluster proxy that serves tunnels until ctx
// ends.
func NewClusterProxy(ctx context.Context) *ClusterProxy {
	s := proxy.NewServer()
	go s.Serve(ctx)
	return &ClusterProxy{Server: s, handler: &proxy.Handler{Server: s}}
}

// Serve returns o with the cluster proxy served by the API server.
func (p *ClusterProxy) Serve(o controlplane.Options) controlplane.Options {
	o.Extensions = append(o.Extensions, p.handler.Extension())
	return o
}
