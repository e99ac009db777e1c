package work

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/flotilla-io/flotilla/agent/spokeclient"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// Defaults of Config.
const (
	// DefaultResyncInterval is how often each work is checked against the
	// spoke when no event asks for it.
	DefaultResyncInterval = 10 * time.Second
	// DefaultEvictionGracePeriod is how long an AppliedManifestWork whose
	// ManifestWork is gone from the hub is kept before it is evicted.
	DefaultEvictionGracePeriod = 60 * time.Minute
	// DefaultWorkers is how many works are reconciled at once.
	DefaultWorkers = 20
)

// Client-side rate limits. client-go's default of 5 requests a second
// would make a thousand works take minutes; the API servers' own priority
// and fairness protects them.
const (
	hubQPS, hubBurst     = 300, 600
	spokeQPS, spokeBurst = 300, 600
)

// Config configures the work agent of one managed cluster.
type Config struct {
	// ClusterName is the managed cluster's name, which is also its hub
	// namespace: the only one whose ManifestWorks the agent reads.
	ClusterName string
	// Spoke reaches the managed cluster's API server.
	Spoke *rest.Config
	// ResyncInterval is how often each work is checked against the spoke
	// besides the events that ask for it (jittered by up to 10 %); 0 means
	// DefaultResyncInterval.
	ResyncInterval time.Duration
	// EvictionGracePeriod is how long an AppliedManifestWork whose
	// ManifestWork is gone from a reachable hub is kept before it, and what
	// it applied, is removed; 0 means DefaultEvictionGracePeriod.
	EvictionGracePeriod time.Duration
	// Workers is how many works are reconciled at once; 0 means DefaultWorkers.
	Workers int
	// HubHash, when set, replaces HubHash of the hub's URL in the names and
	// specs of the AppliedManifestWorks, for agents that share one managed
	// cluster and one hub.
	HubHash string
	// SpokeMapper, when set, resolves the managed cluster's kinds instead
	// of a discovery-backed RESTMapper of the agent's own.
	SpokeMapper meta.RESTMapper
}

// Agent applies the ManifestWorks of one managed cluster. Make one with New
// for the life of the process; Run it with each hub session.
type Agent struct {
	cfg   Config
	spoke *spokeClients
	// sar remembers the executor's SubjectAccessReviews for a while.
	sar *accessCache
	// cel compiles condition rules once per expression.
	cel *celCache
}

// spokeClients reach the managed cluster.
type spokeClients struct {
	dynamic  dynamic.Interface
	metadata metadata.Interface
	kube     kubernetes.Interface
	// applied reads and writes AppliedManifestWorks, uncached.
	applied client.Client
	// mapper resolves kinds by discovery, and discovers again on a miss,
	// so that a kind whose CRD a work just created becomes usable.
	mapper meta.RESTMapper
}

// New checks cfg and builds the clients of the managed cluster.
func New(cfg Config) (*Agent, error) {
	if cfg.ClusterName == "" || cfg.Spoke == nil {
		return nil, errors.New("the work agent needs a cluster name and the managed cluster's client configuration")
	}
	if cfg.ResyncInterval <= 0 {
		cfg.ResyncInterval = DefaultResyncInterval
	}
	if cfg.EvictionGracePeriod <= 0 {
		cfg.EvictionGracePeriod = DefaultEvictionGracePeriod
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	spoke, err := newSpokeClients(cfg.Spoke, cfg.SpokeMapper)
	if err != nil {
		return nil, fmt.Errorf("create the managed cluster's clients: %w", err)
	}
	return &Agent{cfg: cfg, spoke: spoke, sar: newAccessCache(cfg.ResyncInterval), cel: newCELCache()}, nil
}

func newSpokeClients(base *rest.Config, mapper meta.RESTMapper) (*spokeClients, error) {
	c, err := spokeclient.New(base, spokeQPS, spokeBurst, mapper)
	if err != nil {
		return nil, err
	}
	s := &spokeClients{dynamic: c.Dynamic, metadata: c.Metadata, mapper: c.Mapper}
	if s.kube, err = kubernetes.NewForConfigAndClient(c.Config, c.HTTPClient); err != nil {
		return nil, err
	}
	s.applied, err = client.New(c.Config, client.Options{HTTPClient: c.HTTPClient, Scheme: workScheme, Mapper: fixedMapper(meta.RESTScopeRoot)})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// workScheme holds the work types, the only ones the agent reads typed.
var workScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(workv1.AddToScheme(s))
	return s
}()

// fixedMapper maps the work kinds without discovery: ManifestWork is
// namespaced on the hub, AppliedManifestWork cluster-scoped on the spoke.
func fixedMapper(appliedScope meta.RESTScope) meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(workv1.GroupVersion.WithKind("ManifestWork"), meta.RESTScopeNamespace)
	m.Add(workv1.GroupVersion.WithKind("AppliedManifestWork"), appliedScope)
	return m
}

// Run applies the cluster's ManifestWorks with hub, the configuration of
// one hub session as agent agentID, until ctx ends. It returns an error
// only when it cannot start; everything after that it retries.
func (a *Agent) Run(ctx context.Context, hub *rest.Config, agentID string) error {
	logger := klog.FromContext(ctx)
	hubCfg := rest.CopyConfig(hub)
	hubCfg.QPS, hubCfg.Burst = hubQPS, hubBurst
	hubHash := HubHash(hub.Host)
	if a.cfg.HubHash != "" {
		hubHash = a.cfg.HubHash
	}
	r := &reconciler{
		Agent:    a,
		hubHash:  hubHash,
		agentID:  agentID,
		agentKey: AgentKey(hubHash, a.cfg.ClusterName),
		states:   newStateStore(),
	}
	r.watcher = newWatcher(a.spoke.metadata, r.agentKey, hubHash, a.cfg.ClusterName)

	mgr, err := ctrl.NewManager(hubCfg, ctrl.Options{
		Scheme: workScheme,
		Logger: logger,
		MapperProvider: func(*rest.Config, *http.Client) (meta.RESTMapper, error) {
			return fixedMapper(meta.RESTScopeRoot), nil
		},
		Cache: cache.Options{
			DefaultNamespaces: map[string]cache.Config{a.cfg.ClusterName: {}},
			DefaultTransform:  cache.TransformStripManagedFields(),
		},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Tests run several agents in one process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return fmt.Errorf("create the work agent's hub manager: %w", err)
	}
	r.hub = mgr.GetClient()
	r.hubReader = mgr.GetAPIReader()
	r.recorder = mgr.GetEventRecorder("work-agent")
	err = ctrl.NewControllerManagedBy(mgr).
		Named("manifestwork").
		For(&workv1.ManifestWork{}, builder.WithPredicates(workChanged())).
		WatchesRawSource(source.Func(r.watcher.Start)).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: a.cfg.Workers,
			// A failing work is retried soon at first, and never less often
			// than it is resynced.
			RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](100*time.Millisecond, a.cfg.ResyncInterval),
		}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("create the ManifestWork controller: %w", err)
	}
	if err := mgr.Add(&evictor{r: r, cache: mgr.GetCache()}); err != nil {
		return err
	}
	logger.Info("Applying ManifestWorks", "hub", hub.Host, "hubHash", hubHash, "agentID", agentID)
	return mgr.Start(ctx)
}
