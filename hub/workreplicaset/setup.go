package workreplicaset

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/hub/workreplicaset/health"
)

// Client-side rate limit of the ManifestWork writer: a fan-out to 1,000
// clusters is 1,000 creates, which should take seconds, not minutes.
const (
	writerQPS   = 500
	writerBurst = 1000
)

// Setup adds the ManifestWorkReplicaSet controller to the hub manager.
func Setup(mgr manager.Manager) error {
	works, err := newWorkCache(mgr)
	if err != nil {
		return fmt.Errorf("set up the ManifestWorkReplicaSet controller: %w", err)
	}
	cfg := rest.CopyConfig(mgr.GetConfig())
	cfg.QPS, cfg.Burst = max(cfg.QPS, writerQPS), max(cfg.Burst, writerBurst)
	writer, err := client.New(cfg, client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return fmt.Errorf("set up the ManifestWorkReplicaSet controller: ManifestWork client: %w", err)
	}
	r := &Reconciler{Client: mgr.GetClient(), Works: works, Revisions: works, Writer: writer, Recorder: mgr.GetEventRecorder(recorderName), Health: health.NewChecker()}
	if err := r.SetupWithManager(mgr, works); err != nil {
		return fmt.Errorf("set up the ManifestWorkReplicaSet controller: %w", err)
	}
	return nil
}

// newWorkCache starts, with the manager, a cache of the ManifestWorks and
// ControllerRevisions that carry ManifestWorkReplicaSetLabel only, indexed
// by that label: at 5,000 cluster namespaces the other works are none of
// this controller's business, nor are the hub's other ControllerRevisions.
func newWorkCache(mgr manager.Manager) (cache.Cache, error) {
	owned, err := labels.NewRequirement(workv1.ManifestWorkReplicaSetLabel, selection.Exists, nil)
	if err != nil {
		return nil, err
	}
	c, err := cache.New(mgr.GetConfig(), cache.Options{
		Scheme: mgr.GetScheme(),
		Mapper: mgr.GetRESTMapper(),
		ByObject: map[client.Object]cache.ByObject{
			&workv1.ManifestWork{}:       {Label: labels.NewSelector().Add(*owned)},
			&appsv1.ControllerRevision{}: {Label: labels.NewSelector().Add(*owned)},
		},
		// Only ManifestWorks and ControllerRevisions are read from here;
		// anything else is a bug.
		ReaderFailOnMissingInformer: true,
		// The controller never reads their managed fields.
		DefaultTransform: cache.TransformStripManagedFields(),
	})
	if err != nil {
		return nil, fmt.Errorf("create the ManifestWork cache: %w", err)
	}
	byOwner := func(o client.Object) []string {
		if v := o.GetLabels()[workv1.ManifestWorkReplicaSetLabel]; v != "" {
			return []string{v}
		}
		return nil
	}
	for _, o := range []struct {
		obj  client.Object
		kind string
	}{{&workv1.ManifestWork{}, "ManifestWork"}, {&appsv1.ControllerRevision{}, "ControllerRevision"}} {
		if _, err := c.GetInformer(context.Background(), o.obj); err != nil {
			return nil, fmt.Errorf("%s informer: %w", o.kind, err)
		}
		if err := c.IndexField(context.Background(), o.obj, ownerIndex, byOwner); err != nil {
			return nil, fmt.Errorf("index %ss by replica set: %w", o.kind, err)
		}
	}
	if err := mgr.Add(c); err != nil {
		return nil, fmt.Errorf("add the ManifestWork cache: %w", err)
	}
	return c, nil
}

// SetupWithManager registers the reconciler, its indexes and its watches;
// works is the cache of replica-set ManifestWorks and ControllerRevisions.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, works cache.Cache) error {
	ctx := context.Background()
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &workv1alpha1.ManifestWorkReplicaSet{}, placementIndex, placementKeys); err != nil {
		return fmt.Errorf("index ManifestWorkReplicaSets by Placement: %w", err)
	}
	if err := idx.IndexField(ctx, &clusterv1beta1.PlacementDecision{}, decisionClusterIndex, decisionClusters); err != nil {
		return fmt.Errorf("index PlacementDecisions by cluster: %w", err)
	}
	// The failover grace is an annotation: its change matters too.
	specChanged := builder.WithPredicates(predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))
	return ctrl.NewControllerManagedBy(mgr).
		Named("manifestworkreplicaset").
		For(&workv1alpha1.ManifestWorkReplicaSet{}, builder.WithPredicates(replicaSetChanged())).
		WatchesRawSource(source.Kind(works, &workv1.ManifestWork{}, handler.TypedEnqueueRequestsFromMapFunc(ownerOfWork))).
		WatchesRawSource(source.Kind(works, &appsv1.ControllerRevision{}, handler.TypedEnqueueRequestsFromMapFunc(ownerOfRevision))).
		Watches(&clusterv1beta1.PlacementDecision{}, handler.EnqueueRequestsFromMapFunc(r.replicaSetsOfDecision)).
		Watches(&clusterv1beta1.Placement{}, handler.EnqueueRequestsFromMapFunc(r.replicaSetsOfPlacement), specChanged).
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(r.replicaSetsOfCluster), builder.WithPredicates(clusterChanged())).
		WithOptions(controller.Options{MaxConcurrentReconciles: maxConcurrentReconciles}).
		Complete(r)
}
