package addon

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/addon"
	"github.com/flotilla-io/flotilla/internal/rollout"
)

// configure copies the desired configs into the status of the
// ManagedClusterAddOns, paced per placement by its rollout strategy; a
// ManagedClusterAddOn no placement chose (a Manual install) gets them at
// once. Configured says whether a cluster has its desired configs.
func (r *Reconciler) configure(_ context.Context, s *scope) (ctrl.Result, error) {
	if !s.managed {
		return ctrl.Result{}, nil
	}
	var res ctrl.Result
	placed := map[string]bool{}
	s.cma.Status.InstallProgressions = nil
	for _, node := range s.placements {
		var states []rollout.Cluster
		for _, c := range node.clusters {
			placed[c] = true
			if mca := s.mcas[c]; s.rollsOut(mca) {
				states = append(states, stateOf(mca, s.desired[c], node.groups[c], s.now))
			}
		}
		if node.invalid != nil {
			node.result = rollout.Result{Stopped: true, StopReason: node.invalid.Error()}
		} else {
			node.result = rollout.Decide(states, node.strategy, s.now)
		}
		push := map[string]bool{}
		for _, c := range node.result.Push {
			push[c] = true
		}
		for _, c := range node.clusters {
			if mca := s.mcas[c]; s.rollsOut(mca) {
				s.configureOne(mca, push[c])
			}
		}
		res = lowest(res, ctrl.Result{RequeueAfter: node.result.RequeueAfter})
		s.progression(node)
	}
	for _, mca := range s.live() {
		if !placed[mca.Namespace] && s.rollsOut(mca) {
			s.configureOne(mca, true)
		}
	}
	return res, nil
}

// rollsOut says whether mca takes part in the rollout: it exists, is not
// being deleted, and the add-on supports the configs its spec names.
func (s *scope) rollsOut(mca *addonv1alpha1.ManagedClusterAddOn) bool {
	if mca == nil || !mca.DeletionTimestamp.IsZero() {
		return false
	}
	_, bad := s.unsupported[mca.Namespace]
	return !bad
}

// configureOne writes mca's desired configs if push, and its Configured.
func (s *scope) configureOne(mca *addonv1alpha1.ManagedClusterAddOn, push bool) {
	desired := s.desired[mca.Namespace]
	if push {
		mca.Status.ConfigReferences = withDesired(mca.Status.ConfigReferences, desired)
	}
	c := metav1.Condition{Type: addon.ConditionConfigured, Status: metav1.ConditionTrue,
		Reason: addon.ReasonConfigured, Message: addon.MessageConfigured, ObservedGeneration: mca.Generation}
	switch {
	case !sameDesired(mca.Status.ConfigReferences, desired):
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, addon.ReasonNotConfigured, addon.MessageNotConfigured
	case len(s.problems[mca.Namespace]) > 0:
		c.Status, c.Reason = metav1.ConditionFalse, addon.ReasonNotConfigured
		c.Message = "the desired configs cannot all be read: " + joinProblems(s.problems[mca.Namespace])
	}
	meta.SetStatusCondition(&mca.Status.Conditions, c)
}

// stateOf is where mca stands in the rollout of desired: updated once its
// status carries them, succeeded once they were applied (lastAppliedConfig
// = desiredConfig), failed when its Progressing says Failed.
func stateOf(mca *addonv1alpha1.ManagedClusterAddOn, desired []addonv1alpha1.ConfigReference, g rollout.Group, now time.Time) rollout.Cluster {
	c := rollout.Cluster{Name: mca.Namespace, Group: g}
	if !sameDesired(mca.Status.ConfigReferences, desired) {
		return c
	}
	c.Updated, c.PushedAt = true, now
	prog := meta.FindStatusCondition(mca.Status.Conditions, addon.ConditionProgressing)
	if prog != nil {
		c.PushedAt = prog.LastTransitionTime.Time
	}
	switch {
	case applied(mca.Status.ConfigReferences):
		c.Available, c.AvailableSince = true, c.PushedAt
	case prog != nil && prog.Reason == addon.ReasonFailed:
		c.Degraded = true
	}
	return c
}

// applied says whether every config reference was applied as desired.
func applied(refs []addonv1alpha1.ConfigReference) bool {
	for _, r := range refs {
		if r.DesiredConfig == nil || r.LastAppliedConfig == nil || *r.DesiredConfig != *r.LastAppliedConfig {
			return false
		}
	}
	return true
}

// sameDesired says whether the status references carry exactly desired.
func sameDesired(refs, desired []addonv1alpha1.ConfigReference) bool {
	if len(refs) != len(desired) {
		return false
	}
	have := map[addonv1alpha1.ConfigGroupResource][]addonv1alpha1.ConfigSpecHash{}
	for _, r := range refs {
		if r.DesiredConfig == nil {
			return false
		}
		have[r.ConfigGroupResource] = append(have[r.ConfigGroupResource], *r.DesiredConfig)
	}
	for _, d := range desired {
		list := have[d.ConfigGroupResource]
		i := indexOf(list, *d.DesiredConfig)
		if i < 0 {
			return false
		}
		have[d.ConfigGroupResource] = append(list[:i], list[i+1:]...)
	}
	return true
}

func indexOf(list []addonv1alpha1.ConfigSpecHash, h addonv1alpha1.ConfigSpecHash) int {
	for i, x := range list {
		if x == h {
			return i
		}
	}
	return -1
}

// withDesired is the status references for desired: each keeps the
// lastAppliedConfig of the reference it replaces (the same config, else
// an earlier one of the same group and resource), so that a rollout sees
// what a cluster still runs.
func withDesired(cur, desired []addonv1alpha1.ConfigReference) []addonv1alpha1.ConfigReference {
	used := make([]bool, len(cur))
	pick := func(d addonv1alpha1.ConfigReference, sameName bool) int {
		for i, c := range cur {
			if used[i] || c.ConfigGroupResource != d.ConfigGroupResource {
				continue
			}
			if !sameName || (c.DesiredConfig != nil && c.DesiredConfig.ConfigReferent == d.DesiredConfig.ConfigReferent) {
				return i
			}
		}
		return -1
	}
	out := make([]addonv1alpha1.ConfigReference, len(desired))
	for j, d := range desired {
		out[j] = *d.DeepCopy()
		if i := pick(d, true); i >= 0 {
			used[i] = true
			out[j].LastAppliedConfig = cur[i].LastAppliedConfig.DeepCopy()
		}
	}
	for j, d := range desired {
		if out[j].LastAppliedConfig != nil {
			continue
		}
		if i := pick(d, false); i >= 0 {
			used[i] = true
			out[j].LastAppliedConfig = cur[i].LastAppliedConfig.DeepCopy()
		}
	}
	return out
}
