package registration

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
)

// clusterPatcher writes what one reconcile changed on a ManagedCluster:
// metadata and spec in one merge patch, then status in another. Both carry
// the resourceVersion they were computed from: the agent writes the same
// conditions list, and a merge patch replaces lists whole, so a write based
// on a stale copy must fail (and be retried) rather than undo the agent's.
type clusterPatcher struct {
	before *clusterv1.ManagedCluster
}

func newClusterPatcher(cluster *clusterv1.ManagedCluster) *clusterPatcher {
	return &clusterPatcher{before: cluster.DeepCopy()}
}

// patch writes the differences between cluster and the copy taken when
// the patcher was made.
func (p *clusterPatcher) patch(ctx context.Context, c client.Client, cluster *clusterv1.ManagedCluster) error {
	status := cluster.Status.DeepCopy()
	base := p.before
	if !equality.Semantic.DeepEqual(base.ObjectMeta, cluster.ObjectMeta) || !equality.Semantic.DeepEqual(base.Spec, cluster.Spec) {
		if err := c.Patch(ctx, cluster, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			return fmt.Errorf("patch ManagedCluster %s: %w", cluster.Name, err)
		}
		// The response holds the stored status, which the resourceVersion
		// check proved equal to the one this reconcile started from.
		base = cluster.DeepCopy()
		cluster.Status = *status
	}
	if equality.Semantic.DeepEqual(base.Status, cluster.Status) {
		return nil
	}
	if err := c.Status().Patch(ctx, cluster, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("patch status of ManagedCluster %s: %w", cluster.Name, err)
	}
	return nil
}
