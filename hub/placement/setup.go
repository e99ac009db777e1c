package placement

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
)

// Setup adds the placement controller to the hub manager.
func Setup(mgr manager.Manager) error {
	r := &Reconciler{Client: mgr.GetClient(), Scheme: mgr.GetScheme(), Recorder: mgr.GetEventRecorder(recorderName)}
	if err := r.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up the Placement controller: %w", err)
	}
	return nil
}

// SetupWithManager registers the reconciler, its watches and its indexes.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	ctx := context.Background()
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &clusterv1beta2.ManagedClusterSetBinding{}, bindingSetIndex, bindingSet); err != nil {
		return fmt.Errorf("index ManagedClusterSetBindings by spec.clusterSet: %w", err)
	}
	if err := idx.IndexField(ctx, &clusterv1beta1.Placement{}, scoreNameIndex, scoreNames); err != nil {
		return fmt.Errorf("index Placements by the scores they read: %w", err)
	}
	specChanged := builder.WithPredicates(predicate.GenerationChangedPredicate{})
	return ctrl.NewControllerManagedBy(mgr).
		Named("placement").
		For(&clusterv1beta1.Placement{}, specChanged).
		Owns(&clusterv1beta1.PlacementDecision{}).
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(r.placementsOfCluster), builder.WithPredicates(clusterChanged())).
		Watches(&clusterv1beta2.ManagedClusterSet{}, handler.EnqueueRequestsFromMapFunc(r.placementsOfSet), specChanged).
		Watches(&clusterv1beta2.ManagedClusterSetBinding{}, handler.EnqueueRequestsFromMapFunc(r.placementsOfBinding), specChanged).
		Watches(&clusterv1alpha1.AddOnPlacementScore{}, handler.EnqueueRequestsFromMapFunc(r.placementsOfScore)).
		WithOptions(controller.Options{MaxConcurrentReconciles: maxConcurrentReconciles}).
		Complete(r)
}
