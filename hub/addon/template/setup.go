package template

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
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
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		For(&addonv1alpha1.ManagedClusterAddOn{}, builder.WithPredicates(r.addOnChanged())).
		Watches(&addonv1alpha1.ClusterManagementAddOn{}, handler.EnqueueRequestsFromMapFunc(r.addOnsNamed(func(o client.Object) string { return o.GetName() }))).
		Watches(&addonv1alpha1.AddOnTemplate{}, handler.EnqueueRequestsFromMapFunc(r.addOnsNamed(func(o client.Object) string {
			return o.(*addonv1alpha1.AddOnTemplate).Spec.AddonName
		}))).
		Watches(&addonv1alpha1.AddOnDeploymentConfig{}, handler.EnqueueRequestsFromMapFunc(r.addOnsConfiguredBy)).
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(r.addOnsOfCluster), builder.WithPredicates(clusterChanged())).
		WatchesRawSource(source.Kind(works, &workv1.ManifestWork{}, handler.TypedEnqueueRequestsFromMapFunc(addOnOfWork), workChanged())).
		Complete(r)
}

// workers is how many ManagedClusterAddOns are synced at once. Each is
// its own (its cluster's works and RoleBindings), and a pass mostly waits
// for the API server's answers to its writes: with one worker, a template
// add-on placed on 1,000 clusters queued about 6,000 passes of 33 ms one
// after the other (docs/benchmarks.md, "Add-ons").
const workers = 8

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

// addOnChanged passes a ManagedClusterAddOn's creation and deletion, and
// the updates that change what a pass reads or writes (addOnInputs) and
// are not this controller's own write with nothing left to do (ownWrite):
// not those of the fields other writers own alone, the agent's
// ClusterCertificateRotated and the manager's Progressing among them,
// which a fleet's add-on writes several times per cluster, each a pass
// that found nothing to do.
func (r *Reconciler) addOnChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*addonv1alpha1.ManagedClusterAddOn)
		n, ok2 := e.ObjectNew.(*addonv1alpha1.ManagedClusterAddOn)
		if !ok1 || !ok2 {
			return true
		}
		return !r.ownWrite(n) && !equality.Semantic.DeepEqual(addOnInputs(o), addOnInputs(n))
	}}
}

// passConditions are the conditions a pass reads or writes.
var passConditions = []string{
	addon.ConditionConfigured, addon.ConditionRegistrationApplied, addon.ConditionManifestApplied,
	addon.ConditionAvailable, addon.ConditionHookManifestCompleted,
}

// addOnInputs is what of mca a pass reads or writes: its metadata but the
// resource version and managed fields, its spec, and the status fields and
// conditions (passConditions) of the template controller's part; a pass
// writes the conditions it owns again when another writer changed them.
func addOnInputs(mca *addonv1alpha1.ManagedClusterAddOn) any {
	var conditions []metav1.Condition
	for _, t := range passConditions {
		if c := meta.FindStatusCondition(mca.Status.Conditions, t); c != nil {
			conditions = append(conditions, metav1.Condition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message, ObservedGeneration: c.ObservedGeneration})
		}
	}
	// Of the configs, a pass reads the desired ones only (not the
	// manager's lastApplied); of the driver, whether it is token.
	var configs []addonv1alpha1.ConfigReference
	for _, c := range mca.Status.ConfigReferences {
		configs = append(configs, addonv1alpha1.ConfigReference{ConfigGroupResource: c.ConfigGroupResource, DesiredConfig: c.DesiredConfig})
	}
	return struct {
		Generation          int64
		UID                 types.UID
		DeletionTimestamp   *metav1.Time
		Labels, Annotations map[string]string
		Finalizers          []string
		OwnerReferences     []metav1.OwnerReference
		Spec                addonv1alpha1.ManagedClusterAddOnSpec
		ConfigReferences    []addonv1alpha1.ConfigReference
		Registrations       []addonv1alpha1.RegistrationConfig
		SupportedConfigs    []addonv1alpha1.ConfigGroupResource
		Namespace           string
		TokenDriver         bool
		HealthCheck         addonv1alpha1.HealthCheck
		Conditions          []metav1.Condition
	}{mca.Generation, mca.UID, mca.DeletionTimestamp, mca.Labels, mca.Annotations, mca.Finalizers, mca.OwnerReferences, mca.Spec,
		configs, mca.Status.Registrations, mca.Status.SupportedConfigs,
		mca.Status.Namespace, mca.Status.KubeClientDriver == "token", mca.Status.HealthCheck, conditions}
}

// workChanged passes an add-on work's creation and deletion, and the
// updates a pass reads: not the work agent's finalizer alone.
func workChanged() predicate.TypedPredicate[*workv1.ManifestWork] {
	return predicate.TypedFuncs[*workv1.ManifestWork]{UpdateFunc: func(e event.TypedUpdateEvent[*workv1.ManifestWork]) bool {
		o, n := e.ObjectOld, e.ObjectNew
		return o.Generation != n.Generation || !o.DeletionTimestamp.Equal(n.DeletionTimestamp) ||
			!equality.Semantic.DeepEqual(o.Labels, n.Labels) || !equality.Semantic.DeepEqual(o.Annotations, n.Annotations) ||
			!equality.Semantic.DeepEqual(o.OwnerReferences, n.OwnerReferences) || !equality.Semantic.DeepEqual(o.Status, n.Status)
	}}
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
