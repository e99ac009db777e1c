package template

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/internal/addon"
)

// configIndex indexes ManagedClusterAddOns by the <namespace>/<name> of
// the AddOnDeploymentConfig they use.
const configIndex = "addon-template.deploymentconfig"

// Setup adds the template add-on controller to the hub manager.
func Setup(mgr manager.Manager) error {
	works, err := newWorkCache(mgr)
	if err != nil {
		return fmt.Errorf("set up the template add-on controller: %w", err)
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &addonv1alpha1.ManagedClusterAddOn{}, configIndex, func(o client.Object) []string {
		if ref := desired(o.(*addonv1alpha1.ManagedClusterAddOn), addon.ConfigResourceDeploymentConfigs); ref != nil {
			return []string{ref.Namespace + "/" + ref.Name}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("set up the template add-on controller: index ManagedClusterAddOns: %w", err)
	}
	r := &Reconciler{Client: mgr.GetClient(), Works: works}
	return ctrl.NewControllerManagedBy(mgr).
		Named("addon-template").
		For(&addonv1alpha1.ManagedClusterAddOn{}).
		Watches(&addonv1alpha1.ClusterManagementAddOn{}, handler.EnqueueRequestsFromMapFunc(r.addOnsNamed(func(o client.Object) string { return o.GetName() }))).
		Watches(&addonv1alpha1.AddOnTemplate{}, handler.EnqueueRequestsFromMapFunc(r.addOnsNamed(func(o client.Object) string {
			return o.(*addonv1alpha1.AddOnTemplate).Spec.AddonName
		}))).
		Watches(&addonv1alpha1.AddOnDeploymentConfig{}, handler.EnqueueRequestsFromMapFunc(r.addOnsConfiguredBy)).
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(r.addOnsOfCluster), builder.WithPredicates(clusterChanged())).
		WatchesRawSource(source.Kind(works, &workv1.ManifestWork{}, handler.TypedEnqueueRequestsFromMapFunc(addOnOfWork))).
		Complete(r)
}

// newWorkCache starts, with the manager, a cache of the ManifestWorks that
// carry AddOnNameLabel only: the other works of a fleet are none of this
// controller's business.
func newWorkCache(mgr manager.Manager) (cache.Cache, error) {
	req, err := labels.NewRequirement(addon.AddOnNameLabel, selection.Exists, nil)
	if err != nil {
		return nil, err
	}
	c, err := cache.New(mgr.GetConfig(), cache.Options{
		Scheme:                      mgr.GetScheme(),
		Mapper:                      mgr.GetRESTMapper(),
		ByObject:                    map[client.Object]cache.ByObject{&workv1.ManifestWork{}: {Label: labels.NewSelector().Add(*req)}},
		ReaderFailOnMissingInformer: true,
		DefaultTransform:            cache.TransformStripManagedFields(),
	})
	if err != nil {
		return nil, fmt.Errorf("create the add-on ManifestWork cache: %w", err)
	}
	if _, err := c.GetInformer(context.Background(), &workv1.ManifestWork{}); err != nil {
		return nil, fmt.Errorf("add-on ManifestWork informer: %w", err)
	}
	if err := mgr.Add(c); err != nil {
		return nil, fmt.Errorf("add the add-on ManifestWork cache: %w", err)
	}
	return c, nil
}

// addOnsNamed maps an object to the ManagedClusterAddOns, on every
// cluster, of the add-on name(o) names.
func (r *Reconciler) addOnsNamed(name func(client.Object) string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		a := name(o)
		list := &addonv1alpha1.ManagedClusterAddOnList{}
		if err := r.Client.List(ctx, list); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Listing ManagedClusterAddOns failed", "addon", a)
			return nil
		}
		var reqs []reconcile.Request
		for _, mca := range list.Items {
			if mca.Name == a {
				reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: mca.Namespace, Name: mca.Name}})
			}
		}
		return reqs
	}
}

// addOnsConfiguredBy maps an AddOnDeploymentConfig to the add-ons using it.
func (r *Reconciler) addOnsConfiguredBy(ctx context.Context, o client.Object) []reconcile.Request {
	list := &addonv1alpha1.ManagedClusterAddOnList{}
	if err := r.Client.List(ctx, list, client.MatchingFields{configIndex: o.GetNamespace() + "/" + o.GetName()}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing ManagedClusterAddOns failed", "addOnDeploymentConfig", klogRef(o))
		return nil
	}
	return requests(list)
}

// addOnsOfCluster maps a ManagedCluster to the add-ons in its namespace.
func (r *Reconciler) addOnsOfCluster(ctx context.Context, o client.Object) []reconcile.Request {
	list := &addonv1alpha1.ManagedClusterAddOnList{}
	if err := r.Client.List(ctx, list, client.InNamespace(o.GetName())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing ManagedClusterAddOns failed", "cluster", o.GetName())
		return nil
	}
	return requests(list)
}

func requests(list *addonv1alpha1.ManagedClusterAddOnList) []reconcile.Request {
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for _, mca := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: mca.Namespace, Name: mca.Name}})
	}
	return reqs
}

// addOnOfWork maps an add-on's work to its ManagedClusterAddOn.
func addOnOfWork(_ context.Context, w *workv1.ManifestWork) []reconcile.Request {
	a := w.Labels[addon.AddOnNameLabel]
	if a == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: w.Namespace, Name: a}}}
}

// clusterChanged passes the ManagedCluster changes rendering and health
// read: its annotations (image registries), its Available condition and
// its deletion.
func clusterChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld.(*clusterv1.ManagedCluster), e.ObjectNew.(*clusterv1.ManagedCluster)
		oc := meta.FindStatusCondition(o.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
		nc := meta.FindStatusCondition(n.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
		return !equality.Semantic.DeepEqual(o.Annotations, n.Annotations) ||
			(oc == nil) != (nc == nil) || oc != nil && oc.Status != nc.Status ||
			!o.DeletionTimestamp.Equal(n.DeletionTimestamp)
	}}
}

func klogRef(o client.Object) string { return o.GetNamespace() + "/" + o.GetName() }
