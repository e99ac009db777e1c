package clusterset

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
)

// labelRetry is how soon a label write that lost a race is tried again.
const labelRetry = 200 * time.Millisecond

// labelWorkers is how many clusters are labelled at once. Each label is
// one write, whose round trip is what limits a single worker: with 5,000
// clusters registering, one worker labelled about 7 a second, and the
// last clusters were in no set until 12 minutes after all were
// Available.
const labelWorkers = 8

// DefaultSetReconciler labels every ManagedCluster without a set into the
// "default" set, as OCM's hub does when a cluster registers.
type DefaultSetReconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
}

// SetupWithManager registers the reconciler; it sees only clusters that
// lack the label.
func (r *DefaultSetReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("managedcluster-defaultset").
		For(&clusterv1.ManagedCluster{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return needsDefaultSet(o.GetLabels()) && o.GetDeletionTimestamp().IsZero()
		}))).
		WithOptions(controller.Options{MaxConcurrentReconciles: labelWorkers}).
		Complete(r)
}

// needsDefaultSet says whether a cluster with these labels is in no set by label.
func needsDefaultSet(labels map[string]string) bool {
	return labels[clusterv1beta2.ClusterSetLabel] == ""
}

// Reconcile labels one cluster into the default set.
func (r *DefaultSetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cluster := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, cluster); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !needsDefaultSet(cluster.Labels) || !cluster.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	before := cluster.DeepCopy()
	if cluster.Labels == nil {
		cluster.Labels = map[string]string{}
	}
	cluster.Labels[clusterv1beta2.ClusterSetLabel] = clusterv1beta2.DefaultManagedClusterSetName
	// The lock keeps a label that a user set meanwhile from being overwritten.
	err := r.Client.Patch(ctx, cluster, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	switch {
	case apierrors.IsConflict(err), apierrors.IsNotFound(err):
		// New clusters are written by several hands at first (the hub's
		// taints, the agent's status): try again soon.
		return ctrl.Result{RequeueAfter: labelRetry}, nil
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("label ManagedCluster %s into set %s: %w", cluster.Name, clusterv1beta2.DefaultManagedClusterSetName, err)
	}
	klog.FromContext(ctx).V(1).Info("Labelled cluster into the default set", "managedCluster", klog.KObj(cluster))
	return ctrl.Result{}, nil
}
