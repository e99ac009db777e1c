package registration

import (
	"context"

	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
)

// reconcileDefaultSet puts a cluster in no set (no clusterset label, or an
// empty one) into "default", as OCM's hub does at registration. A new
// cluster gets the label in the same write as its finalizer and first
// taints: a controller of its own made it a second write per join, which
// raced this one (409s and retries for a fleet joining at once).
//
// The hub's identity needs no managedclustersets/join for it: the join
// policy counts a missing label as "default", so this is no change of set.
func (r *ClusterReconciler) reconcileDefaultSet(ctx context.Context, s *clusterScope) (ctrl.Result, error) {
	if putInDefaultSet(s.cluster) && !s.created {
		klog.FromContext(ctx).V(1).Info("Labelled cluster into the default set", "managedCluster", klog.KObj(s.cluster))
	}
	return ctrl.Result{}, nil
}

// putInDefaultSet labels a cluster in no set into "default" and says
// whether it did.
func putInDefaultSet(cluster *clusterv1.ManagedCluster) bool {
	if cluster.Labels[clusterv1beta2.ClusterSetLabel] != "" {
		return false
	}
	if cluster.Labels == nil {
		cluster.Labels = map[string]string{}
	}
	cluster.Labels[clusterv1beta2.ClusterSetLabel] = clusterv1beta2.DefaultManagedClusterSetName
	return true
}
