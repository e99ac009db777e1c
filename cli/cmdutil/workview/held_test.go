package workview

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

func TestWorkMissing(t *testing.T) {
	cond := func(typ string, s metav1.ConditionStatus, gen int64, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: s, ObservedGeneration: gen, Reason: reason, Message: msg}
	}
	work := func(conds ...metav1.Condition) *workv1.ManifestWork {
		return &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: "c1"}, Status: workv1.ManifestWorkStatus{Conditions: conds}}
	}
	notApplied := "its agent has not reported it Applied yet (does the agent of cluster c1 run? see `flotilla describe cluster c1` and the agent's log)"
	notAvailable := "its agent has not reported it Available yet"
	for _, tc := range []struct {
		name string
		mw   *workv1.ManifestWork
		gen  int64
		want []string
	}{
		{"gone", nil, 1, []string{"the ManifestWork is gone from the hub (was it deleted?)"}},
		{"no status", work(), 1, []string{notApplied, notAvailable}},
		{"applied only", work(cond(workv1.WorkApplied, metav1.ConditionTrue, 1, "", "")), 1, []string{notAvailable}},
		{"ready", work(cond(workv1.WorkApplied, metav1.ConditionTrue, 1, "", ""), cond(workv1.WorkAvailable, metav1.ConditionTrue, 1, "", "")), 1, nil},
		{"no observed generation counts", work(cond(workv1.WorkApplied, metav1.ConditionTrue, 0, "", ""), cond(workv1.WorkAvailable, metav1.ConditionTrue, 0, "", "")), 2, nil},
		{"stale", work(cond(workv1.WorkApplied, metav1.ConditionTrue, 1, "", ""), cond(workv1.WorkAvailable, metav1.ConditionTrue, 1, "", "")), 2, []string{notApplied, notAvailable}},
		{"failed", work(cond(workv1.WorkApplied, metav1.ConditionFalse, 1, "AppliedManifestWorkFailed", "1 of 1 failed: namespace nope not found"), cond(workv1.WorkAvailable, metav1.ConditionUnknown, 1, "", "")), 1,
			[]string{"Applied is False (AppliedManifestWorkFailed): 1 of 1 failed: namespace nope not found", "Available is Unknown"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := WorkMissing(tc.mw, tc.gen); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("workMissing = %q, want %q", got, tc.want)
			}
		})
	}
}
