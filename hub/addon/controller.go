package addon

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
)

// Reconciler writes the hub's condition on ManagedClusterAddOns.
type Reconciler struct {
	Client client.Client
}

// Setup adds the add-on controller to mgr.
func Setup(mgr manager.Manager) error {
	r := &Reconciler{Client: mgr.GetClient()}
	return ctrl.NewControllerManagedBy(mgr).
		Named("addon").
		For(&addonv1alpha1.ManagedClusterAddOn{}).
		Watches(&addonv1alpha1.ClusterManagementAddOn{}, handler.EnqueueRequestsFromMapFunc(r.addOnsNamed)).
		Complete(r)
}

// addOnsNamed maps a ClusterManagementAddOn to the ManagedClusterAddOns of
// that add-on, on every cluster.
func (r *Reconciler) addOnsNamed(ctx context.Context, cma client.Object) []reconcile.Request {
	list := &addonv1alpha1.ManagedClusterAddOnList{}
	if err := r.Client.List(ctx, list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing ManagedClusterAddOns failed", "addon", cma.GetName())
		return nil
	}
	var reqs []reconcile.Request
	for _, mca := range list.Items {
		if mca.Name == cma.GetName() {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: mca.Namespace, Name: mca.Name}})
		}
	}
	return reqs
}

// Reconcile sets or removes the hub's condition on one ManagedClusterAddOn.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	if err := r.Client.Get(ctx, req.NamespacedName, mca); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if mca.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	cma := &addonv1alpha1.ClusterManagementAddOn{}
	err := r.Client.Get(ctx, types.NamespacedName{Name: mca.Name}, cma)
	if apierrors.IsNotFound(err) {
		cma = nil
	} else if err != nil {
		return ctrl.Result{}, err
	}
	conditions := desiredConditions(mca, cma)
	if equality.Semantic.DeepEqual(conditions, mca.Status.Conditions) {
		return ctrl.Result{}, nil
	}
	patch := client.MergeFromWithOptions(mca.DeepCopy(), client.MergeFromWithOptimisticLock{})
	mca.Status.Conditions = conditions
	if err := r.Client.Status().Patch(ctx, mca, patch); err != nil {
		return ctrl.Result{}, fmt.Errorf("write the conditions of ManagedClusterAddOn %s: %w", req, err)
	}
	return ctrl.Result{}, nil
}

// desiredConditions are mca's conditions with the hub's condition set, or
// taken back when the add-on's own manager runs it; cma is nil when no
// ClusterManagementAddOn declares the add-on.
func desiredConditions(mca *addonv1alpha1.ManagedClusterAddOn, cma *addonv1alpha1.ClusterManagementAddOn) []metav1.Condition {
	conditions := append([]metav1.Condition(nil), mca.Status.Conditions...)
	if cma != nil && cma.Annotations[LifecycleAnnotation] == LifecycleSelf {
		if c := meta.FindStatusCondition(conditions, ConditionManifestApplied); c != nil && ours(c.Reason) {
			meta.RemoveStatusCondition(&conditions, ConditionManifestApplied)
		}
		return conditions
	}
	c := metav1.Condition{
		Type: ConditionManifestApplied, Status: metav1.ConditionFalse, ObservedGeneration: mca.Generation,
		Reason: ReasonAddOnManagerNotRunning,
		Message: fmt.Sprintf("this Flotilla hub runs no add-on manager, so nothing installs add-on %q on cluster %q. "+
			"Run the add-on's own manager against this hub and annotate ClusterManagementAddOn %s with %s=%s, or deploy the add-on's agent with a ManifestWork",
			mca.Name, mca.Namespace, mca.Name, LifecycleAnnotation, LifecycleSelf),
	}
	if cma == nil {
		c.Reason = ReasonClusterManagementAddOnNotFound
		c.Message = fmt.Sprintf("no ClusterManagementAddOn %q declares this add-on, and this Flotilla hub runs no add-on manager: nothing installs it on cluster %q", mca.Name, mca.Namespace)
	}
	meta.SetStatusCondition(&conditions, c)
	return conditions
}

func ours(reason string) bool {
	return reason == ReasonAddOnManagerNotRunning || reason == ReasonClusterManagementAddOnNotFound
}
