package policy

import (
	"fmt"

	"k8s.io/client-go/metadata"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	policyv1beta1 "github.com/flotilla-io/flotilla/api/policy/v1beta1"
)

// Setup adds the policy propagator to the hub manager.
func Setup(mgr manager.Manager) error {
	meta, err := metadata.NewForConfigAndClient(mgr.GetConfig(), mgr.GetHTTPClient())
	if err != nil {
		return fmt.Errorf("create the metadata client of the policy propagator: %w", err)
	}
	r := &Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder(recorderName), APIReader: mgr.GetAPIReader(), refs: newRefWatches(meta)}
	if err := r.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up the policy propagator: %w", err)
	}
	if err := (&SetReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up the PolicySet status controller: %w", err)
	}
	return nil
}

// SetupWithManager registers the reconciler and its watches. Requests are
// always root policies: every watch maps its object to the roots it affects.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("policy-propagator").
		Watches(&policyv1.Policy{}, handler.EnqueueRequestsFromMapFunc(rootOfPolicy)).
		Watches(&policyv1.PlacementBinding{}, handler.EnqueueRequestsFromMapFunc(r.policiesOfBinding)).
		Watches(&clusterv1beta1.PlacementDecision{}, handler.EnqueueRequestsFromMapFunc(r.policiesOfDecision)).
		Watches(&policyv1beta1.PolicySet{}, handler.EnqueueRequestsFromMapFunc(r.policiesOfSetAndDependents)).
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(r.templatedPoliciesOfCluster), builder.WithPredicates(predicate.LabelChangedPredicate{})).
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(r.policiesOfCluster), builder.WithPredicates(taintsChanged())).
		WatchesRawSource(source.Func(r.refs.Start)).
		WithOptions(controller.Options{MaxConcurrentReconciles: maxConcurrentReconciles}).
		Complete(r)
}
