package policy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/dynamic"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
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
	"sigs.k8s.io/controller-runtime/pkg/handler"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/flotilla-io/flotilla/agent/spokeclient"
	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

// DefaultWorkers is how many policies are evaluated at once.
const DefaultWorkers = 5

// FieldManager is the field manager of what the policy agent writes.
const FieldManager = "flotilla-policy-agent"

// Client-side rate limits, as the work agent's: the API servers' own
// priority and fairness protect them.
const (
	hubQPS, hubBurst     = 50, 100
	spokeQPS, spokeBurst = 100, 200
)

// Config configures the policy agent of one managed cluster.
type Config struct {
	// ClusterName is the managed cluster's name, which is also its hub
	// namespace: the only one whose Policies the agent reads.
	ClusterName string
	// Namespace is the agent's namespace on the spoke. Agents before
	// this one kept the policies' ConfigurationPolicies there; they are
	// moved, on start, to the cluster's namespace on the spoke (named as
	// the cluster, as OCM's agent keeps them), where they are kept now.
	Namespace string
	// Spoke reaches the managed cluster's API server.
	Spoke *rest.Config
	// Workers is how many policies are evaluated at once; 0 means DefaultWorkers.
	Workers int
	// SpokeMapper, when set, resolves the managed cluster's kinds instead
	// of a discovery-backed RESTMapper of the agent's own.
	SpokeMapper meta.RESTMapper
}

// Agent evaluates the replicated Policies of one managed cluster. Make one
// with New for the life of the process; Run it with each hub session.
type Agent struct {
	cfg   Config
	spoke *spokeClients
}

// spokeClients reach the managed cluster.
type spokeClients struct {
	dynamic  dynamic.Interface
	metadata metadata.Interface
	// mapper resolves kinds by discovery, and discovers again on a miss,
	// so that a kind whose CRD arrives later becomes usable.
	mapper meta.RESTMapper
	// policies reads and writes ConfigurationPolicies, uncached.
	policies client.Client
}

// New checks cfg and builds the clients of the managed cluster.
func New(cfg Config) (*Agent, error) {
	if cfg.ClusterName == "" || cfg.Namespace == "" || cfg.Spoke == nil {
		return nil, errors.New("the policy agent needs a cluster name, its namespace and the managed cluster's client configuration")
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	spoke, err := newSpokeClients(cfg.Spoke, cfg.SpokeMapper)
	if err != nil {
		return nil, fmt.Errorf("create the managed cluster's clients: %w", err)
	}
	return &Agent{cfg: cfg, spoke: spoke}, nil
}

func newSpokeClients(base *rest.Config, mapper meta.RESTMapper) (*spokeClients, error) {
	c, err := spokeclient.New(base, spokeQPS, spokeBurst, mapper)
	if err != nil {
		return nil, err
	}
	s := &spokeClients{dynamic: c.Dynamic, metadata: c.Metadata, mapper: c.Mapper}
	s.policies, err = client.New(c.Config, client.Options{HTTPClient: c.HTTPClient, Scheme: policyScheme, Mapper: policyMapper()})
	return s, err
}

// policyScheme holds the policy types, the only ones the agent reads typed
// (with Namespace, for the cluster's namespace on the spoke).
var policyScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(policyv1.AddToScheme(s))
	s.AddKnownTypes(corev1.SchemeGroupVersion, &corev1.Namespace{}, &corev1.NamespaceList{})
	metav1.AddToGroupVersion(s, corev1.SchemeGroupVersion)
	return s
}()

// policyMapper maps the policy kinds (all namespaced) and Namespace without discovery.
func policyMapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(policyv1.GroupVersion.WithKind(policyv1.PolicyKind), meta.RESTScopeNamespace)
	// The cache asks whether a list kind is namespaced when the
	// dependencies watch lists the cluster's policies.
	m.Add(policyv1.GroupVersion.WithKind("PolicyList"), meta.RESTScopeNamespace)
	m.Add(policyv1.GroupVersion.WithKind(policyv1.ConfigurationPolicyKind), meta.RESTScopeNamespace)
	m.Add(policyv1.GroupVersion.WithKind(policyv1.CertificatePolicyKind), meta.RESTScopeNamespace)
	m.Add(corev1.SchemeGroupVersion.WithKind("Namespace"), meta.RESTScopeRoot)
	return m
}

// Run evaluates the cluster's policies with hub, the configuration of one
// hub session, until ctx ends. It returns an error only when it cannot
// start; everything after that it retries.
func (a *Agent) Run(ctx context.Context, hub *rest.Config) error {
	logger := klog.FromContext(ctx)
	hubCfg := rest.CopyConfig(hub)
	hubCfg.QPS, hubCfg.Burst = hubQPS, hubBurst
	mgr, err := ctrl.NewManager(hubCfg, ctrl.Options{
		Scheme: policyScheme,
		Logger: logger,
		MapperProvider: func(*rest.Config, *http.Client) (meta.RESTMapper, error) {
			return policyMapper(), nil
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
		return fmt.Errorf("create the policy agent's hub manager: %w", err)
	}
	if err := a.prepareSpoke(ctx); err != nil {
		return err
	}
	events, err := corev1client.NewForConfig(hubCfg)
	if err != nil {
		return fmt.Errorf("create the policy agent's hub event client: %w", err)
	}
	r := &reconciler{
		Agent:   a,
		events:  events,
		hub:     mgr.GetClient(),
		watches: newRegistry(a.spoke.dynamic, a.cfg.ClusterName),
	}
	if _, err := a.spoke.metadata.Resource(crdResource).Get(ctx, constraintTemplateResource.GroupResource().String(), metav1.GetOptions{}); err == nil {
		r.gatekeeper.Store(true)
	}
	templates := &templateSource{client: a.spoke.metadata, namespace: a.cfg.ClusterName, cluster: a.cfg.ClusterName, resource: configurationPoliciesGVR}
	certificates := &templateSource{client: a.spoke.metadata, namespace: a.cfg.ClusterName, cluster: a.cfg.ClusterName, resource: certificatePoliciesGVR}
	err = ctrl.NewControllerManagedBy(mgr).
		Named("policy").
		// The agent's own status writes change neither generation nor labels.
		For(&policyv1.Policy{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		// Dependencies: a change of compliance evaluates the policies that
		// depend on the policy or on one of its templates.
		Watches(&policyv1.Policy{}, handler.EnqueueRequestsFromMapFunc(r.dependents), builder.WithPredicates(complianceChanged())).
		WatchesRawSource(source.Func(r.watches.Start)).
		WatchesRawSource(source.Func(templates.Start)).
		WatchesRawSource(source.Func(certificates.Start)).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: a.cfg.Workers,
			RateLimiter:             workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](100*time.Millisecond, time.Minute),
		}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("create the Policy controller: %w", err)
	}
	logger.Info("Evaluating policies", "hub", hub.Host, "namespace", a.cfg.ClusterName)
	return mgr.Start(ctx)
}
