package clusterset

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
)

// BindingReconciler writes the Bound condition of ManagedClusterSetBindings.
type BindingReconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
}

// SetupWithManager registers the reconciler, its watches, and the index of
// bindings by spec.clusterSet.
func (r *BindingReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &clusterv1beta2.ManagedClusterSetBinding{}, bindingSetIndex, bindingSet); err != nil {
		return fmt.Errorf("index ManagedClusterSetBindings by spec.clusterSet: %w", err)
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("managedclustersetbinding").
		For(&clusterv1beta2.ManagedClusterSetBinding{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		// Only a set's coming and going changes whether it is bound.
		Watches(&clusterv1beta2.ManagedClusterSet{}, handler.EnqueueRequestsFromMapFunc(r.bindingsOfSet),
			builder.WithPredicates(predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
				return e.ObjectOld.GetDeletionTimestamp().IsZero() != e.ObjectNew.GetDeletionTimestamp().IsZero()
			}})).
		Complete(r)
}

func bindingSet(o client.Object) []string {
	return []string{o.(*clusterv1beta2.ManagedClusterSetBinding).Spec.ClusterSet}
}

// bindingsOfSet maps a set to the bindings that name it, in any namespace.
func (r *BindingReconciler) bindingsOfSet(ctx context.Context, set client.Object) []reconcile.Request {
	list := &clusterv1beta2.ManagedClusterSetBindingList{}
	if err := r.Client.List(ctx, list, client.MatchingFields{bindingSetIndex: set.GetName()}, client.UnsafeDisableDeepCopy); err != nil {
		klog.FromContext(ctx).Error(err, "Cannot list the bindings of a ManagedClusterSet", "managedClusterSet", klog.KObj(set))
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for _, b := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: b.Namespace, Name: b.Name}})
	}
	return reqs
}

// Reconcile writes the Bound condition of one binding.
func (r *BindingReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	binding := &clusterv1beta2.ManagedClusterSetBinding{}
	if err := r.Client.Get(ctx, req.NamespacedName, binding); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	exists := false
	if binding.Spec.ClusterSet != "" {
		set := &clusterv1beta2.ManagedClusterSet{}
		err := r.Client.Get(ctx, client.ObjectKey{Name: binding.Spec.ClusterSet}, set)
		switch {
		case err == nil:
			exists = set.DeletionTimestamp.IsZero()
		case !apierrors.IsNotFound(err):
			return ctrl.Result{}, fmt.Errorf("get ManagedClusterSet %s: %w", binding.Spec.ClusterSet, err)
		}
	}
	before := binding.DeepCopy()
	meta.SetStatusCondition(&binding.Status.Conditions, boundCondition(binding, exists))
	if equality.Semantic.DeepEqual(before.Status, binding.Status) {
		return ctrl.Result{}, nil
	}
	if err := r.Client.Status().Patch(ctx, binding, client.MergeFrom(before)); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("patch status of ManagedClusterSetBinding %s/%s: %w", binding.Namespace, binding.Name, err)
	}
	return ctrl.Result{}, nil
}
