package addon

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/addon"
)

// progression writes node's entry of the ClusterManagementAddOn's
// status.installProgressions: the placement's desired configs, and
// Progressing, True while its clusters roll out, False Completed (then
// lastApplied and lastKnownGood := desired) once all succeeded.
func (s *scope) progression(node *placementNode) {
	ref := addonv1alpha1.PlacementRef{Namespace: node.ref.Namespace, Name: node.ref.Name}
	var prev *addonv1alpha1.InstallProgression
	for i := range s.cmaBefore.Status.InstallProgressions {
		if s.cmaBefore.Status.InstallProgressions[i].PlacementRef == ref {
			prev = &s.cmaBefore.Status.InstallProgressions[i]
		}
	}
	ip := addonv1alpha1.InstallProgression{PlacementRef: ref}
	if prev != nil {
		ip.Conditions = append(ip.Conditions, prev.Conditions...)
	}
	for _, d := range node.desired {
		icr := addonv1alpha1.InstallConfigReference{ConfigGroupResource: d.ConfigGroupResource, DesiredConfig: d.DesiredConfig.DeepCopy()}
		if prev != nil {
			for _, p := range prev.ConfigReferences {
				if p.ConfigGroupResource == d.ConfigGroupResource {
					icr.LastAppliedConfig, icr.LastKnownGoodConfig = p.LastAppliedConfig.DeepCopy(), p.LastKnownGoodConfig.DeepCopy()
				}
			}
		}
		ip.ConfigReferences = append(ip.ConfigReferences, icr)
	}

	res := node.result
	configured := 0
	for _, c := range node.clusters {
		if s.rollsOut(s.mcas[c]) {
			configured++
		}
	}
	// The rollout fails a cluster whose Progressing says Failed as
	// Degraded, and one past progressDeadline as timed out.
	failed, timeout := 0, 0
	for _, f := range res.Failed {
		if f.Why == "Degraded" {
			failed++
		} else {
			timeout++
		}
	}
	c := metav1.Condition{Type: addon.ConditionProgressing}
	switch {
	case node.invalid != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, addon.ReasonFailed, node.invalid.Error()
	case configured == 0 || res.Succeeded != configured:
		c.Status, c.Reason = metav1.ConditionTrue, addon.ReasonProgressing
		c.Message = fmt.Sprintf("selected clusters %d. configured addons %d/%d progressing..., %d failed %d timeout.",
			len(node.chosen), res.InFlight+res.Succeeded, configured, failed, timeout)
	default:
		for i := range ip.ConfigReferences {
			ip.ConfigReferences[i].LastAppliedConfig = ip.ConfigReferences[i].DesiredConfig.DeepCopy()
			ip.ConfigReferences[i].LastKnownGoodConfig = ip.ConfigReferences[i].DesiredConfig.DeepCopy()
		}
		c.Status, c.Reason = metav1.ConditionFalse, addon.ReasonCompleted
		c.Message = fmt.Sprintf("selected clusters %d. configured addons %d/%d completed with no errors, %d failed %d timeout.",
			len(node.chosen), res.Succeeded, configured, failed, timeout)
	}
	meta.SetStatusCondition(&ip.Conditions, c)
	s.cma.Status.InstallProgressions = append(s.cma.Status.InstallProgressions, ip)
}
