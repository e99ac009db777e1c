package work

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// report works out the status of each manifest and of the work, and
// remembers what it found for the next pass.
func (r *reconciler) report(_ context.Context, s *scope) error {
	manifests := make([]workv1.ManifestCondition, len(s.manifests))
	failed := false
	for i, m := range s.manifests {
		prev := s.previous(m)
		var next workv1.ManifestCondition
		if m.result.cached != nil {
			next = *m.result.cached.DeepCopy()
		} else {
			next = r.manifestStatus(s, m, prev)
			r.remember(s, m, next)
		}
		var prevConds []metav1.Condition
		if prev != nil {
			prevConds = prev.Conditions
		}
		next.Conditions = mergeConditions(prevConds, next.Conditions, s.now)
		manifests[i] = next
		failed = failed || !meta.IsStatusConditionTrue(next.Conditions, workv1.ManifestApplied)
	}
	s.work.Status.ResourceStatus.Manifests = manifests
	s.work.Status.Conditions = mergeConditions(s.work.Status.Conditions, workConditions(manifests, s.work.Generation), s.now)
	if failed {
		// A manifest that failed may succeed soon (its namespace or CRD
		// appears): look again sooner at first, then less often.
		s.state.failures++
		s.requeueAfter(min(r.cfg.ResyncInterval, time.Second<<min(s.state.failures-1, 6)))
	} else {
		s.state.failures = 0
	}
	return nil
}

// remember records m's object as this pass left it, so that the next pass
// may skip it when nothing changed. A failed manifest is not remembered.
func (r *reconciler) remember(s *scope, m *manifest, status workv1.ManifestCondition) {
	res := m.result
	if m.invalid != nil || s.refused != "" || res.err != nil || (res.live == nil && res.heldBy == nil) {
		delete(s.state.manifests, m.key)
		return
	}
	st := &manifestState{hash: m.hash, generation: s.work.Generation, status: status, owned: res.owned, heldBy: res.heldBy}
	if res.live != nil {
		// A held object that is gone is never current: each pass looks
		// whether its holder still keeps it.
		st.resourceVersion = res.live.GetResourceVersion()
	}
	s.state.manifests[m.key] = st
}

// previous is the status the work reported for m before, when it named
// the same object.
func (s *scope) previous(m *manifest) *workv1.ManifestCondition {
	for i := range s.work.Status.ResourceStatus.Manifests {
		p := &s.work.Status.ResourceStatus.Manifests[i]
		if p.ResourceMeta == m.meta {
			return p
		}
	}
	return nil
}

// manifestStatus is the status of manifest m after this pass: its
// conditions (LastTransitionTime left to mergeConditions), feedback,
// condition rules and drift record.
func (r *reconciler) manifestStatus(s *scope, m *manifest, prev *workv1.ManifestCondition) workv1.ManifestCondition {
	gen := s.work.Generation
	mc := workv1.ManifestCondition{ResourceMeta: m.meta}
	cond := func(t string, st metav1.ConditionStatus, reason, msg string) {
		mc.Conditions = append(mc.Conditions, metav1.Condition{Type: t, Status: st, Reason: reason, Message: truncate(msg), ObservedGeneration: gen})
	}
	res := m.result
	switch {
	case m.invalid != nil:
		cond(workv1.ManifestApplied, metav1.ConditionFalse, workv1.ReasonAppliedManifestFailed, m.invalid.Error())
		reason := workv1.ReasonFetchingResourceFailed
		if m.meta.Kind == "" || m.meta.Name == "" {
			reason = workv1.ReasonIncompleteResourceMeta
		}
		cond(workv1.ManifestAvailable, metav1.ConditionUnknown, reason, "The object cannot be looked up: "+m.invalid.Error())
		return mc
	case s.refused != "":
		cond(workv1.ManifestApplied, metav1.ConditionFalse, workv1.ReasonAppliedManifestFailed, "Not applied: "+s.refused)
		cond(workv1.ManifestAvailable, metav1.ConditionUnknown, workv1.ReasonFetchingResourceFailed, "Not applied: "+s.refused)
		return mc
	case res.err != nil:
		cond(workv1.ManifestApplied, metav1.ConditionFalse, workv1.ReasonAppliedManifestFailed, res.err.Error())
	case res.heldBy != nil:
		reason, msg := heldCondition(m, res.heldBy)
		cond(workv1.ManifestApplied, metav1.ConditionFalse, reason, msg)
		if c := prevCondition(prev, workv1.ManifestApplied); c == nil || c.Reason != reason {
			s.events = append(s.events, workEvent{corev1.EventTypeWarning, reason, truncate(msg)})
		}
	case m.strategy == workv1.UpdateStrategyTypeReadOnly:
		cond(workv1.ManifestApplied, metav1.ConditionTrue, workv1.ReasonAppliedManifestComplete, "Read only: the object is read, never written")
	default:
		cond(workv1.ManifestApplied, metav1.ConditionTrue, workv1.ReasonAppliedManifestComplete, "Apply manifest complete")
	}
	switch {
	case res.readErr != nil:
		cond(workv1.ManifestAvailable, metav1.ConditionUnknown, workv1.ReasonFetchingResourceFailed, res.readErr.Error())
	case res.live != nil:
		cond(workv1.ManifestAvailable, metav1.ConditionTrue, workv1.ReasonResourceAvailable, "Resource is available")
	default:
		cond(workv1.ManifestAvailable, metav1.ConditionFalse, workv1.ReasonResourceNotAvailable, "Resource is not available")
	}
	if res.live != nil && m.config != nil {
		gk := schema.GroupKind{Group: m.meta.Group, Kind: m.meta.Kind}
		if len(m.config.FeedbackRules) > 0 {
			values, err := feedbackValues(gk, res.live.Object, m.config.FeedbackRules)
			mc.StatusFeedback.Values = values
			mc.Conditions = append(mc.Conditions, feedbackCondition(values, err, gen))
		}
		for _, c := range r.cel.evaluateRules(gk, res.live.Object, m.config.ConditionRules) {
			c.ObservedGeneration = gen
			c.Message = truncate(c.Message)
			mc.Conditions = setCondition(mc.Conditions, c)
		}
	}
	var prevDrift *workv1.ManifestDrift
	var prevDrifted *metav1.Condition
	if prev != nil {
		prevDrift, prevDrifted = prev.Drift, meta.FindStatusCondition(prev.Conditions, workv1.ManifestDrifted)
	}
	var c *metav1.Condition
	mc.Drift, c = driftStatus(prevDrift, prevDrifted, res.drift, s.now)
	if c != nil {
		c.ObservedGeneration = gen
		mc.Conditions = setCondition(mc.Conditions, *c)
	}
	s.driftEvents(m, res.drift, prevDrifted)
	return mc
}

// driftEvents tells the hub about a correction, or a drift that stays.
func (s *scope) driftEvents(m *manifest, d *drift, prev *metav1.Condition) {
	switch {
	case d == nil:
	case d.err == nil:
		s.events = append(s.events, workEvent{corev1.EventTypeNormal, workv1.ReasonDriftCorrected,
			fmt.Sprintf("Put back %s: %s", describe(m.key), driftWhat(d.fields))})
	case prev == nil || prev.Status != metav1.ConditionTrue:
		s.events = append(s.events, workEvent{corev1.EventTypeWarning, workv1.ReasonDriftNotCorrected,
			truncate(fmt.Sprintf("Cannot put back %s: %s: %v", describe(m.key), driftWhat(d.fields), d.err))})
	}
}

// prevCondition is condition t of the previous status, or nil.
func prevCondition(prev *workv1.ManifestCondition, t string) *metav1.Condition {
	if prev == nil {
		return nil
	}
	return meta.FindStatusCondition(prev.Conditions, t)
}

// isComplete says whether a manifest's Complete condition is true.
func isComplete(mc *workv1.ManifestCondition) bool {
	return mc != nil && meta.IsStatusConditionTrue(mc.Conditions, workv1.ManifestComplete)
}
