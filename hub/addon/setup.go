package addon

import (
	"context"
	"maps"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/internal/addon"
)

// nameIndex indexes ManagedClusterAddOns by name, which is the add-on's.
const nameIndex = "addon-manager.metadata.name"

// Setup adds the add-on manager and the add-on cluster controller to mgr.
func Setup(mgr manager.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &addonv1alpha1.ManagedClusterAddOn{}, nameIndex,
		func(o client.Object) []string { return []string{o.GetName()} }); err != nil {
		return err
	}
	r := &Reconciler{Client: mgr.GetClient(), Configs: &ConfigReader{Reader: mgr.GetCache(), Mapper: mgr.GetRESTMapper()}}
	c, err := ctrl.NewControllerManagedBy(mgr).
		Named("addon-manager").
		For(&addonv1alpha1.ClusterManagementAddOn{}).
		Watches(&addonv1alpha1.ManagedClusterAddOn{}, batched(byName)).
		Watches(&workv1.ManifestWork{}, batched(addOnOfWork),
			builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetLabels()[addon.AddOnNameLabel] != "" }))).
		Watches(&clusterv1beta1.Placement{}, handler.EnqueueRequestsFromMapFunc(r.addOnsOfPlacement)).
		Watches(&clusterv1beta1.PlacementDecision{}, handler.EnqueueRequestsFromMapFunc(r.addOnsOfPlacement)).
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(r.placedAddOns), builder.WithPredicates(annotationsChanged)).
		Build(r)
	if err != nil {
		return err
	}
	r.Configs.Watch = func(obj client.Object) error {
		return c.Watch(source.Kind(mgr.GetCache(), obj, handler.EnqueueRequestsFromMapFunc(r.addOnsOfConfig)))
	}
	return setupClusters(mgr)
}

// batchDelay is how long a change of one of an add-on's
// ManagedClusterAddOns or works waits before the add-on's pass, which
// reads and writes all of them: the changes of a fleet's clusters that
// come in that time are one pass, not one each. Without it, 1,000
// clusters enabling an add-on cost 1,022 passes of 250 ms one after the
// other, each over all 1,000 (docs/benchmarks.md, "Add-ons").
const batchDelay = 500 * time.Millisecond

// batched enqueues the add-ons mapFn names batchDelay after the event.
func batched(mapFn handler.MapFunc) handler.EventHandler {
	add := func(ctx context.Context, o client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		for _, req := range mapFn(ctx, o) {
			q.AddAfter(req, batchDelay)
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(ctx, e.Object, q)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(ctx, e.ObjectNew, q)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(ctx, e.Object, q)
		},
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(ctx, e.Object, q)
		},
	}
}

func byName(_ context.Context, o client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: o.GetName()}}}
}

func addOnOfWork(_ context.Context, o client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: o.GetLabels()[addon.AddOnNameLabel]}}}
}

// annotationsChanged passes a ManagedCluster's creation, deletion and
// changes of its annotations, which Placements installs mirror.
var annotationsChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		return !maps.Equal(e.ObjectOld.GetAnnotations(), e.ObjectNew.GetAnnotations()) ||
			!e.ObjectOld.GetDeletionTimestamp().Equal(e.ObjectNew.GetDeletionTimestamp())
	},
}

// addOnsOfPlacement maps a Placement or PlacementDecision to the add-ons
// installed by that placement.
func (r *Reconciler) addOnsOfPlacement(ctx context.Context, o client.Object) []reconcile.Request {
	name := o.GetName()
	if _, ok := o.(*clusterv1beta1.PlacementDecision); ok {
		name = o.GetLabels()[clusterv1beta1.PlacementLabel]
	}
	return r.addOnsWhere(ctx, func(cma *addonv1alpha1.ClusterManagementAddOn) bool {
		for _, p := range cma.Spec.InstallStrategy.Placements {
			if p.Namespace == o.GetNamespace() && p.Name == name {
				return true
			}
		}
		return false
	})
}

// placedAddOns maps a ManagedCluster to the add-ons installed by placements.
func (r *Reconciler) placedAddOns(ctx context.Context, _ client.Object) []reconcile.Request {
	return r.addOnsWhere(ctx, func(cma *addonv1alpha1.ClusterManagementAddOn) bool {
		return cma.Spec.InstallStrategy.Type == addonv1alpha1.AddonInstallStrategyPlacements
	})
}

// addOnsOfConfig maps a config to the add-ons that may use it: every
// declared add-on (defaults and placements name configs), and those a
// ManagedClusterAddOn names it for.
func (r *Reconciler) addOnsOfConfig(ctx context.Context, o client.Object) []reconcile.Request {
	reqs := r.addOnsWhere(ctx, func(*addonv1alpha1.ClusterManagementAddOn) bool { return true })
	mcas := &addonv1alpha1.ManagedClusterAddOnList{}
	if err := r.Client.List(ctx, mcas); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing ManagedClusterAddOns failed")
		return reqs
	}
	for _, mca := range mcas.Items {
		for _, c := range mca.Spec.Configs {
			if c.Name == o.GetName() && c.Namespace == o.GetNamespace() {
				reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Name: mca.Name}})
			}
		}
	}
	return reqs
}

func (r *Reconciler) addOnsWhere(ctx context.Context, keep func(*addonv1alpha1.ClusterManagementAddOn) bool) []reconcile.Request {
	list := &addonv1alpha1.ClusterManagementAddOnList{}
	if err := r.Client.List(ctx, list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing ClusterManagementAddOns failed")
		return nil
	}
	var reqs []reconcile.Request
	for i := range list.Items {
		if keep(&list.Items[i]) {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Name: list.Items[i].Name}})
		}
	}
	return reqs
}
