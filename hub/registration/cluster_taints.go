package registration

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
)

// reconcileTaints keeps the unreachable and unavailable taints in step with
// the Available condition as the earlier phases left it, so that placements
// stop choosing a cluster in the same write that marks it.
func (r *ClusterReconciler) reconcileTaints(_ context.Context, s *clusterScope) (ctrl.Result, error) {
	cluster := s.cluster
	available := meta.FindStatusCondition(cluster.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
	want := desiredTaints(cluster.Spec.Taints, available, s.now)
	if equality.Semantic.DeepEqual(want, cluster.Spec.Taints) {
		return ctrl.Result{}, nil
	}
	cluster.Spec.Taints = want
	if s.created {
		// A new cluster's first taints are no news: a fleet joining at
		// once would write an event per cluster for them.
		return ctrl.Result{}, nil
	}
	var keys []string
	for _, t := range want {
		keys = append(keys, t.Key)
	}
	s.events.Add(corev1.EventTypeNormal, reasonTaintsUpdated, "UpdateTaints", "Taints are now [%s]", strings.Join(keys, ", "))
	return ctrl.Result{}, nil
}
