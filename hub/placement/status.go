package placement

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"

	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/hub/placement/scheduler"
)

// setStatus puts the result into the placement's status, written when the
// reconcile ends.
func (r *Reconciler) setStatus(_ context.Context, s *scope) (ctrl.Result, error) {
	p := s.placement
	wasMisconfigured := meta.IsStatusConditionTrue(p.Status.Conditions, clusterv1beta1.PlacementConditionMisconfigured)
	applyResult(&p.Status, s.result)
	if s.result.Misconfigured != nil && !wasMisconfigured {
		c := meta.FindStatusCondition(p.Status.Conditions, clusterv1beta1.PlacementConditionMisconfigured)
		s.events.Add(corev1.EventTypeWarning, reasonMisconfigured, "Schedule", "%s", c.Message)
	}
	return ctrl.Result{}, nil
}

// applyResult writes a scheduling result into a placement's status. A
// misconfigured result changes only the conditions it carries.
func applyResult(status *clusterv1beta1.PlacementStatus, res scheduler.Result) {
	for _, c := range res.Conditions {
		meta.SetStatusCondition(&status.Conditions, c)
	}
	if res.Misconfigured != nil {
		return
	}
	status.NumberOfSelectedClusters = int32(len(res.Decisions))
	status.DecisionGroups = res.DecisionGroups
	status.LastScoreUpdateTime = res.LastScoreUpdateTime
}
