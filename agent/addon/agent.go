package addon

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/addon"
)

// Defaults of Config.
const (
	// DefaultLeaseCheckInterval is how often an add-on's Lease is read.
	DefaultLeaseCheckInterval = 30 * time.Second
	// DefaultLeaseGracePeriod is how long after its last renewal a Lease
	// still says the add-on is available: 5 × its 60 s duration.
	DefaultLeaseGracePeriod = 5 * time.Minute
	// secretCheckInterval is how often every Secret is looked at.
	secretCheckInterval = 5 * time.Minute
	// minCSRExpiration is the shortest expirationSeconds the contract asks.
	minCSRExpiration = time.Hour
	workers          = 2
)

// Config configures the add-on registration of one managed cluster.
type Config struct {
	// ClusterName is the managed cluster's name: its hub namespace.
	ClusterName string
	// Spoke reaches the managed cluster's API server.
	Spoke *rest.Config
	// CertificateExpiration is the lifetime asked for in CSRs
	// (expirationSeconds, at least an hour); 0 leaves it to the signer.
	CertificateExpiration time.Duration
	// RenewBefore, when set, renews a certificate this long before it
	// expires instead of when 20–25 % of its life is left (for tests).
	RenewBefore time.Duration
	// LeaseCheckInterval and LeaseGracePeriod: 0 means the defaults.
	LeaseCheckInterval, LeaseGracePeriod time.Duration
	// InstallNamespaces, when set, are the only namespaces add-ons may be
	// installed in: the agent writes Secrets and reads Leases there alone,
	// and looks for its Secrets in each of them instead of listing the
	// cluster's Secrets, so that it needs no access to other namespaces'
	// Secrets (the agent chart's addons.installNamespaces). Empty: any.
	InstallNamespaces []string
	// Namespace is the agent's own namespace on the managed cluster.
	// Without InstallNamespaces the agent records there (ConfigMap
	// RecordConfigMapName) each namespace it writes an add-on Secret in,
	// so that it lists Secrets only in those, the default install
	// namespace and its add-ons' install namespaces, never cluster-wide.
	Namespace string
}

// Agent registers one managed cluster's add-ons. Make one with New for the
// life of the process; Run it with each hub session.
type Agent struct {
	cfg   Config
	spoke kubernetes.Interface
}

// New returns the add-on registration of cfg's cluster.
func New(cfg Config) (*Agent, error) {
	if cfg.ClusterName == "" || cfg.Spoke == nil {
		return nil, errors.New("add-on agent: the cluster name and the spoke's configuration are required")
	}
	if cfg.LeaseCheckInterval <= 0 {
		cfg.LeaseCheckInterval = DefaultLeaseCheckInterval
	}
	if cfg.LeaseGracePeriod <= 0 {
		cfg.LeaseGracePeriod = DefaultLeaseGracePeriod
	}
	if cfg.CertificateExpiration > 0 && cfg.CertificateExpiration < minCSRExpiration {
		cfg.CertificateExpiration = minCSRExpiration
	}
	spoke, err := kubernetes.NewForConfig(cfg.Spoke)
	if err != nil {
		return nil, err
	}
	return &Agent{cfg: cfg, spoke: spoke}, nil
}

var hubScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(addonv1alpha1.AddToScheme(s))
	utilruntime.Must(certificatesv1.AddToScheme(s))
	return s
}()

func hubMapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	for _, k := range []string{"ManagedClusterAddOn", "ManagedClusterAddOnList"} {
		m.Add(addonv1alpha1.GroupVersion.WithKind(k), meta.RESTScopeNamespace)
	}
	for _, k := range []string{"CertificateSigningRequest", "CertificateSigningRequestList"} {
		m.Add(certificatesv1.SchemeGroupVersion.WithKind(k), meta.RESTScopeRoot)
	}
	return m
}

// addOnCSRs selects the cluster's add-on CSRs; the hub lets an agent list
// and watch CSRs only with its cluster's label in the selector.
func addOnCSRs(c string) labels.Selector {
	own, _ := labels.NewRequirement(addon.ClusterNameLabel, selection.Equals, []string{c})
	has, _ := labels.NewRequirement(addon.AddOnNameLabel, selection.Exists, nil)
	return labels.NewSelector().Add(*own, *has)
}

// runner is one hub session's state.
type runner struct {
	*Agent
	hub      client.Client
	hubCache cache.Cache
	// hubCluster is how the agent reaches the hub: the add-ons'
	// kubeconfigs name the same server, CA and proxy.
	hubCluster *clientcmdapi.Cluster
	queue      workqueue.TypedRateLimitingInterface[string]
	mu         sync.Mutex
	// pending holds, per Secret, the CSR waited for and its key.
	pending map[secretKey]*pendingCSR
	// swept holds, per add-on, the Secrets it had when its leftovers were
	// last deleted.
	swept map[string]string
	// recorded holds the namespaces of RecordConfigMapName.
	recorded map[string]bool
}

// Run registers the cluster's add-ons over one hub session until ctx
// ends. hubCluster is the hub as the agent's own kubeconfig names it.
func (a *Agent) Run(ctx context.Context, hub *rest.Config, hubCluster *clientcmdapi.Cluster) error {
	logger := klog.FromContext(ctx).WithName("addon")
	ctx = klog.NewContext(ctx, logger)
	if hubCluster == nil || hubCluster.Server == "" {
		return errors.New("add-on agent: the hub's server is unknown")
	}
	hubCfg := rest.CopyConfig(hub)
	hubCache, err := cache.New(hubCfg, cache.Options{
		Scheme:           hubScheme,
		Mapper:           hubMapper(),
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&addonv1alpha1.ManagedClusterAddOn{}:        {Namespaces: map[string]cache.Config{a.cfg.ClusterName: {}}},
			&certificatesv1.CertificateSigningRequest{}: {Label: addOnCSRs(a.cfg.ClusterName)},
		},
	})
	if err != nil {
		return fmt.Errorf("create the add-on agent's cache of the hub: %w", err)
	}
	hubClient, err := client.New(hubCfg, client.Options{Scheme: hubScheme, Mapper: hubMapper(), Cache: &client.CacheOptions{Reader: hubCache}})
	if err != nil {
		return fmt.Errorf("create the add-on agent's client of the hub: %w", err)
	}
	r := &runner{
		Agent: a, hub: hubClient, hubCache: hubCache, hubCluster: hubCluster.DeepCopy(),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](200*time.Millisecond, time.Minute),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "addon-registration"}),
		pending:  map[secretKey]*pendingCSR{},
		swept:    map[string]string{},
		recorded: map[string]bool{},
	}
	defer r.queue.ShutDown()
	if err := r.watch(ctx); err != nil {
		return err
	}
	cacheDone := make(chan error, 1)
	go func() { cacheDone <- hubCache.Start(ctx) }()
	if !hubCache.WaitForCacheSync(ctx) {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("the add-on agent's cache of the hub did not sync: %w", <-cacheDone)
	}
	if err := r.loadRecord(ctx); err != nil {
		logger.Error(err, "Cannot read where the add-ons' Secrets were written; looking only in the add-ons' install namespaces")
	}
	if err := r.sweep(ctx); err != nil {
		logger.Error(err, "Cannot delete the Secrets of add-ons that are gone; retrying with each add-on")
	}
	logger.Info("Registering the cluster's add-ons", "namespace", a.cfg.ClusterName)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for r.next(ctx) {
			}
		})
	}
	select {
	case <-ctx.Done():
		err = nil
	case err = <-cacheDone:
	}
	r.queue.ShutDown()
	wg.Wait()
	return err
}

// watch queues an add-on whenever its ManagedClusterAddOn or one of its CSRs changes.
func (r *runner) watch(ctx context.Context) error {
	for _, w := range []struct {
		obj client.Object
		key func(client.Object) string
	}{
		{&addonv1alpha1.ManagedClusterAddOn{}, func(o client.Object) string { return o.GetName() }},
		{&certificatesv1.CertificateSigningRequest{}, func(o client.Object) string { return o.GetLabels()[addon.AddOnNameLabel] }},
	} {
		inf, err := r.hubCache.GetInformer(ctx, w.obj, cache.BlockUntilSynced(false))
		if err != nil {
			return fmt.Errorf("watch %T: %w", w.obj, err)
		}
		add := func(obj any) {
			if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if o, ok := obj.(client.Object); ok {
				if k := w.key(o); k != "" {
					r.queue.Add(k)
				}
			}
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc: add, UpdateFunc: func(_, obj any) { add(obj) }, DeleteFunc: add,
		}); err != nil {
			return err
		}
	}
	return nil
}

// next handles one add-on from the queue; false once the queue shut down.
func (r *runner) next(ctx context.Context) bool {
	name, shutdown := r.queue.Get()
	if shutdown {
		return false
	}
	defer r.queue.Done(name)
	after, err := r.reconcile(ctx, name)
	switch {
	case ctx.Err() != nil:
	case err != nil:
		klog.FromContext(ctx).Info("Cannot register the add-on yet; retrying", "addon", name, "reason", err.Error())
		r.queue.AddRateLimited(name)
	default:
		r.queue.Forget(name)
		if after > 0 {
			r.queue.AddAfter(name, after)
		}
	}
	return true
}
