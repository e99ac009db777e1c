package workview

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/agent/work"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// WorkMissing is what a work still lacks to be applied and available on
// its cluster, in the order the agent gets there; nil when nothing.
// generation is the spec the status must be about: a condition observed
// for an older spec does not count.
func WorkMissing(mw *workv1.ManifestWork, generation int64) []string {
	if mw == nil {
		return []string{"the ManifestWork is gone from the hub (was it deleted?)"}
	}
	conds := mw.Status.Conditions
	var m []string
	for _, t := range []string{workv1.WorkApplied, workv1.WorkAvailable} {
		c := meta.FindStatusCondition(conds, t)
		switch {
		case c == nil || c.ObservedGeneration < generation && c.ObservedGeneration != 0:
			if t == workv1.WorkApplied {
				m = append(m, fmt.Sprintf("its agent has not reported it Applied yet (does the agent of cluster %s run? see `flotilla describe cluster %s` and the agent's log)", mw.Namespace, mw.Namespace))
			} else {
				m = append(m, "its agent has not reported it Available yet")
			}
		case c.Status != metav1.ConditionTrue:
			msg := fmt.Sprintf("%s is %s", t, c.Status)
			if c.Reason != "" {
				msg += " (" + c.Reason + ")"
			}
			if c.Message != "" {
				msg += ": " + c.Message
			}
			m = append(m, msg)
		}
	}
	return m
}

// WorkHeld says which manifest of the work its agent does not apply
// because another work holds the object, and why; "" when none. Waiting
// does not change that: the other work keeps the object until it is
// deleted or drops it.
func WorkHeld(mw *workv1.ManifestWork, generation int64) string {
	if mw == nil {
		return ""
	}
	for _, m := range mw.Status.ResourceStatus.Manifests {
		c := meta.FindStatusCondition(m.Conditions, workv1.ManifestApplied)
		if c == nil || c.Status != metav1.ConditionFalse || c.ObservedGeneration < generation && c.ObservedGeneration != 0 {
			continue
		}
		if c.Reason == work.ReasonAppliedByAnotherWork || c.Reason == work.ReasonApplyConflict {
			return fmt.Sprintf("manifest %d: %s", m.ResourceMeta.Ordinal, c.Message)
		}
	}
	return ""
}
