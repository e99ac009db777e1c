package inventory

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/api/multicluster/v1alpha1"
)

// Setup adds the ClusterProfile and the neutral PlacementDecision
// controllers to the hub manager.
func Setup(mgr manager.Manager) error {
	ctx := context.Background()
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &clusterv1beta2.ManagedClusterSetBinding{}, bindingSetIndex, func(o client.Object) []string {
		return []string{o.(*clusterv1beta2.ManagedClusterSetBinding).Spec.ClusterSet}
	}); err != nil {
		return fmt.Errorf("index ManagedClusterSetBindings by spec.clusterSet: %w", err)
	}
	info, err := newClusterInfoCache(mgr)
	if err != nil {
		return err
	}
	profiles := &ProfileReconciler{Client: mgr.GetClient(), ClusterInfo: info}
	err = ctrl.NewControllerManagedBy(mgr).
		Named("clusterprofile").
		// One reconcile per inventory namespace: its requests name the
		// namespace alone.
		WatchesRawSource(source.Kind(mgr.GetCache(), &clusterv1beta2.ManagedClusterSetBinding{},
			handler.TypedEnqueueRequestsFromMapFunc(func(_ context.Context, b *clusterv1beta2.ManagedClusterSetBinding) []ctrl.Request {
				return []ctrl.Request{namespaceRequest(b.Namespace)}
			}))).
		WatchesRawSource(source.Kind(mgr.GetCache(), &multiclusterv1alpha1.ClusterProfile{},
			handler.TypedEnqueueRequestsFromMapFunc(func(_ context.Context, p *multiclusterv1alpha1.ClusterProfile) []ctrl.Request {
				return []ctrl.Request{namespaceRequest(p.Namespace)}
			}))).
		Watches(&clusterv1beta2.ManagedClusterSet{}, handler.EnqueueRequestsFromMapFunc(profiles.namespacesOfSet)).
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(profiles.allNamespaces), builder.WithPredicates(profileInputChanged())).
		WatchesRawSource(source.Kind(info, &corev1.ConfigMap{}, handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, _ *corev1.ConfigMap) []ctrl.Request {
			return profiles.allNamespaces(ctx, nil)
		}))).
		Complete(profiles)
	if err != nil {
		return fmt.Errorf("set up the ClusterProfile controller: %w", err)
	}
	if err := idx.IndexField(ctx, &clusterv1beta1.PlacementDecision{}, placementLabelIndex, func(o client.Object) []string {
		if p := o.GetLabels()[clusterv1beta1.PlacementLabel]; p != "" {
			return []string{p}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("index PlacementDecisions by placement: %w", err)
	}
	decisions := &DecisionReconciler{Client: mgr.GetClient(), Scheme: mgr.GetScheme()}
	err = ctrl.NewControllerManagedBy(mgr).
		Named("neutral-placementdecision").
		For(&clusterv1beta1.Placement{}, builder.WithPredicates(predicate.Funcs{UpdateFunc: func(event.UpdateEvent) bool { return false }})).
		Owns(&multiclusterv1alpha1.PlacementDecision{}).
		Watches(&clusterv1beta1.PlacementDecision{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, d client.Object) []ctrl.Request {
			if p := d.GetLabels()[clusterv1beta1.PlacementLabel]; p != "" {
				return []ctrl.Request{{NamespacedName: client.ObjectKey{Namespace: d.GetNamespace(), Name: p}}}
			}
			return nil
		})).
		Complete(decisions)
	if err != nil {
		return fmt.Errorf("set up the neutral PlacementDecision controller: %w", err)
	}
	return nil
}

// namespaceRequest is the request of the inventory in namespace ns.
func namespaceRequest(ns string) ctrl.Request {
	return ctrl.Request{NamespacedName: client.ObjectKey{Name: ns}}
}

// profileInputChanged passes the ManagedCluster updates that change a
// profile: labels (set membership), the conditions, version and claims it
// copies, and deletion.
func profileInputChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		old, ok1 := e.ObjectOld.(*clusterv1.ManagedCluster)
		cur, ok2 := e.ObjectNew.(*clusterv1.ManagedCluster)
		if !ok1 || !ok2 {
			return true
		}
		return !equality.Semantic.DeepEqual(old.Labels, cur.Labels) ||
			old.DeletionTimestamp.IsZero() != cur.DeletionTimestamp.IsZero() ||
			!equality.Semantic.DeepEqual(old.Status.Conditions, cur.Status.Conditions) ||
			old.Status.Version != cur.Status.Version ||
			!equality.Semantic.DeepEqual(old.Status.ClusterClaims, cur.Status.ClusterClaims)
	}}
}
