package work

import (
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// driftStatus is a manifest's drift record and Drifted condition after a
// pass that found drift d (nil: none), given the previous ones:
//
//   - no drift: the record stays; a Drifted=True condition turns False
//     (the object matches again), any other stays as it was;
//   - drift put back: one more correction, at now, with d's fields, and
//     Drifted=False reason DriftCorrected;
//   - drift that could not be put back: the record stays, and
//     Drifted=True reason DriftNotCorrected says why.
//
// The condition's LastTransitionTime is left to mergeConditions.
func driftStatus(prev *workv1.ManifestDrift, prevCond *metav1.Condition, d *drift, now time.Time) (*workv1.ManifestDrift, *metav1.Condition) {
	record := prev.DeepCopy()
	switch {
	case d == nil && prevCond == nil:
		return record, nil
	case d == nil && prevCond.Status == metav1.ConditionTrue:
		return record, &metav1.Condition{Type: workv1.ManifestDrifted, Status: metav1.ConditionFalse, Reason: workv1.ReasonDriftCorrected,
			Message: "The object matches its manifest again"}
	case d == nil:
		c := *prevCond
		return record, &c
	case d.err != nil:
		return record, &metav1.Condition{Type: workv1.ManifestDrifted, Status: metav1.ConditionTrue, Reason: workv1.ReasonDriftNotCorrected,
			Message: fmt.Sprintf("The object differs from its manifest (%s) and cannot be put back: %v", driftWhat(d.fields), d.err)}
	}
	if record == nil {
		record = &workv1.ManifestDrift{}
	}
	record.Corrections++
	record.LastCorrectedTime = metav1.NewTime(now.Truncate(time.Second))
	record.Fields = slices.Clone(d.fields)
	return record, &metav1.Condition{Type: workv1.ManifestDrifted, Status: metav1.ConditionFalse, Reason: workv1.ReasonDriftCorrected,
		Message: fmt.Sprintf("Put back %d time(s), last at %s: %s", record.Corrections, record.LastCorrectedTime.UTC().Format(time.RFC3339), driftWhat(d.fields))}
}

// driftWhat says in words what had changed.
func driftWhat(fields []string) string {
	if slices.Contains(fields, workv1.DriftWholeObject) {
		return "the object had been deleted on the managed cluster"
	}
	if len(fields) == 0 {
		return "the object had changed on the managed cluster"
	}
	return strings.Join(fields, ", ") + " had changed on the managed cluster"
}
