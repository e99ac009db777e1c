package work

import (
	"fmt"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// workConditions aggregates the manifests' conditions into the work's:
// Applied (every manifest applied), Available (every object exists),
// Progressing (objects still on their way), Degraded (a manifest is) and
// Complete (every manifest with a Complete rule is complete; absent when
// none has one). LastTransitionTime is left to mergeConditions.
func workConditions(manifests []workv1.ManifestCondition, gen int64) []metav1.Condition {
	total := len(manifests)
	var notApplied, notAvailable, unknown, degraded, progressing, completable, complete int
	var firstFailure, firstDegraded string
	for _, m := range manifests {
		if c := meta.FindStatusCondition(m.Conditions, workv1.ManifestApplied); c == nil || c.Status != metav1.ConditionTrue {
			notApplied++
			if firstFailure == "" && c != nil {
				firstFailure = fmt.Sprintf("manifest %d: %s", m.ResourceMeta.Ordinal, c.Message)
			}
		}
		switch c := meta.FindStatusCondition(m.Conditions, workv1.ManifestAvailable); {
		case c == nil || c.Status == metav1.ConditionUnknown:
			unknown++
		case c.Status == metav1.ConditionFalse:
			notAvailable++
		}
		if c := meta.FindStatusCondition(m.Conditions, workv1.ManifestDegraded); c != nil && c.Status == metav1.ConditionTrue {
			degraded++
			if firstDegraded == "" {
				firstDegraded = fmt.Sprintf("manifest %d: %s", m.ResourceMeta.Ordinal, c.Message)
			}
		}
		if meta.IsStatusConditionTrue(m.Conditions, workv1.ManifestProgressing) {
			progressing++
		}
		if c := meta.FindStatusCondition(m.Conditions, workv1.ManifestComplete); c != nil {
			completable++
			if c.Status == metav1.ConditionTrue {
				complete++
			}
		}
	}
	cond := func(t string, s metav1.ConditionStatus, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: t, Status: s, Reason: reason, Message: truncate(msg), ObservedGeneration: gen}
	}
	var out []metav1.Condition
	if notApplied == 0 {
		out = append(out, cond(workv1.WorkApplied, metav1.ConditionTrue, workv1.ReasonAppliedManifestWorkComplete, "Apply manifest work complete"))
	} else {
		out = append(out, cond(workv1.WorkApplied, metav1.ConditionFalse, workv1.ReasonAppliedManifestWorkFailed,
			fmt.Sprintf("Failed to apply %d of %d manifests; %s", notApplied, total, firstFailure)))
	}
	switch {
	case notAvailable > 0:
		out = append(out, cond(workv1.WorkAvailable, metav1.ConditionFalse, workv1.ReasonResourcesNotAvailable, fmt.Sprintf("%d of %d resources are not available", notAvailable, total)))
	case unknown > 0:
		out = append(out, cond(workv1.WorkAvailable, metav1.ConditionUnknown, workv1.ReasonResourcesStatusUnknown, fmt.Sprintf("The availability of %d of %d resources is unknown", unknown, total)))
	default:
		out = append(out, cond(workv1.WorkAvailable, metav1.ConditionTrue, workv1.ReasonResourcesAvailable, "All resources are available"))
	}
	switch {
	case notApplied > 0:
		out = append(out, cond(workv1.WorkProgressing, metav1.ConditionFalse, workv1.ReasonProgressingFailed, fmt.Sprintf("%d of %d manifests failed to apply", notApplied, total)))
	case progressing > 0 || notAvailable > 0 || unknown > 0:
		out = append(out, cond(workv1.WorkProgressing, metav1.ConditionTrue, workv1.ReasonProgressingApplying, "Resources are being applied"))
	default:
		out = append(out, cond(workv1.WorkProgressing, metav1.ConditionFalse, workv1.ReasonProgressingCompleted, "All resources are applied and available"))
	}
	if degraded > 0 {
		out = append(out, cond(workv1.WorkDegraded, metav1.ConditionTrue, workv1.ReasonManifestsDegraded, fmt.Sprintf("%d of %d manifests are degraded; %s", degraded, total, firstDegraded)))
	} else {
		out = append(out, cond(workv1.WorkDegraded, metav1.ConditionFalse, workv1.ReasonManifestsNotDegraded, "No manifest is degraded"))
	}
	if completable > 0 && complete == completable {
		out = append(out, cond(workv1.WorkComplete, metav1.ConditionTrue, workv1.ReasonManifestsComplete, "Every manifest with a Complete rule is complete"))
	}
	return out
}

// mergeConditions returns next, in its order, each condition keeping its
// LastTransitionTime from prev when its status did not change and taking
// now (to the second, as the API stores it) when it did. Types missing
// from next are dropped.
func mergeConditions(prev, next []metav1.Condition, now time.Time) []metav1.Condition {
	if len(next) == 0 {
		return nil
	}
	out := make([]metav1.Condition, len(next))
	stamp := metav1.NewTime(now.Truncate(time.Second))
	for i, c := range next {
		c.LastTransitionTime = stamp
		if p := meta.FindStatusCondition(prev, c.Type); p != nil && p.Status == c.Status {
			c.LastTransitionTime = p.LastTransitionTime
		}
		out[i] = c
	}
	return out
}

// setCondition replaces the condition of c's type in list, or appends it.
func setCondition(list []metav1.Condition, c metav1.Condition) []metav1.Condition {
	for i := range list {
		if list[i].Type == c.Type {
			list[i] = c
			return list
		}
	}
	return append(list, c)
}

// truncate shortens a message to maxMessage bytes, on a rune boundary.
func truncate(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	cut := maxMessage - 3
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// maxMessage is the longest condition message the agent writes: API errors
// can be long, and every work's status goes to the hub.
const maxMessage = 1024
