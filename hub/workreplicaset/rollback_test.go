package workreplicaset

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/rollout"
)

func TestRollbackThreshold(t *testing.T) {
	for _, tc := range []struct {
		fc   intstr.IntOrString
		took int
		want int
	}{
		{intstr.IntOrString{}, 4, 1},
		{intstr.FromInt32(2), 4, 2},
		{intstr.FromString("50%"), 3, 2},
		{intstr.FromString("10%"), 1, 1},
		{intstr.FromString("bad"), 4, 1},
	} {
		if got := rollbackThreshold(&workv1alpha1.RollbackPolicy{FailedClusters: tc.fc}, tc.took); got != tc.want {
			t.Errorf("rollbackThreshold(%v, %d) = %d, want %d", tc.fc.String(), tc.took, got, tc.want)
		}
	}
}

func revision(name string, number int64, annotations map[string]string) *appsv1.ControllerRevision {
	return &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations}, Revision: number}
}

func TestLastCompleteBefore(t *testing.T) {
	done := map[string]string{workv1alpha1.RevisionCompleteAnnotation: "2026-01-01T00:00:00Z"}
	r1, r2, r3, r4 := revision("a", 1, done), revision("b", 2, done), revision("c", 3, nil), revision("d", 4, done)
	revs := []*appsv1.ControllerRevision{r1, r2, r3, r4}
	if got := lastCompleteBefore(revs, r3); got != r2 {
		t.Errorf("before revision 3: %v, want revision 2", got)
	}
	if got := lastCompleteBefore(revs, r1); got != nil {
		t.Errorf("before revision 1: %v, want none", got)
	}
}

// rollbackScope is a scope of one placement whose rollout decided res,
// rolling back revision 2 to target.
func rollbackScope(res rollout.Result, target *appsv1.ControllerRevision) *scope {
	pt := &placementTarget{name: "prod", found: true, decided: true, clusters: []string{"c1", "c2"}, rollout: res}
	return &scope{
		mwrs:       &workv1alpha1.ManifestWorkReplicaSet{},
		placements: []*placementTarget{pt},
		rollback: &rollbackState{failed: revision("app-bad", 2, nil), target: target,
			why: "revision 2 failed its gate on 1 of the 1 clusters that took it: c1 (Degraded)"},
	}
}

func TestHoldRollback(t *testing.T) {
	good := revision("app-good", 1, nil)

	s := rollbackScope(rollout.Result{Push: []string{"c2"}, Succeeded: 1}, good)
	s.holdRollback()
	if got := s.placements[0].rollout; len(got.Push) != 1 || got.Stopped {
		t.Errorf("a rollback under way is held: %+v", got)
	}
	if c := rolledBack(s); c.Reason != workv1alpha1.ReasonRollingBack || c.Status != metav1.ConditionFalse ||
		!strings.Contains(c.Message, "revision 2 (app-bad) failed its gate") || !strings.Contains(c.Message, "1 of 2 clusters on it") {
		t.Errorf("under way: %+v", c)
	}

	s = rollbackScope(rollout.Result{Push: []string{"c2"}, Failed: []rollout.Failure{{Cluster: "c1", Why: "Degraded"}}}, good)
	s.holdRollback()
	if got := s.placements[0].rollout; len(got.Push) != 0 || !got.Stopped || !strings.Contains(got.StopReason, "rollback to revision 1 failed") {
		t.Errorf("a rollback that failed on a cluster goes on: %+v", got)
	}
	if c := rolledBack(s); c.Reason != workv1alpha1.ReasonRollbackFailed || !strings.Contains(c.Message, "failed on c1 (Degraded)") {
		t.Errorf("failed: %+v", c)
	}

	s = rollbackScope(rollout.Result{Push: []string{"c2"}, Failed: []rollout.Failure{{Cluster: "c1", Why: "Degraded"}}}, nil)
	s.holdRollback()
	if got := s.placements[0].rollout; len(got.Push) != 0 || !got.Stopped {
		t.Errorf("a failed revision with nothing to go back to goes on rolling out: %+v", got)
	}
	if c := rolledBack(s); c.Reason != workv1alpha1.ReasonNoCompleteRevision || !strings.Contains(c.Message, "nothing was rolled back") {
		t.Errorf("no complete revision: %+v", c)
	}

	s = rollbackScope(rollout.Result{Succeeded: 2, Complete: true}, good)
	s.holdRollback()
	if c := rolledBack(s); c.Reason != workv1alpha1.ReasonRolledBack || c.Status != metav1.ConditionTrue ||
		!strings.Contains(c.Message, "every chosen cluster is back on revision 1 (app-good)") {
		t.Errorf("done: %+v", c)
	}
	if c := placementRolledOut(s); c.Status != metav1.ConditionFalse || c.Reason != workv1alpha1.ReasonRolledBack {
		t.Errorf("PlacementRolledOut of a rolled back revision: %+v", c)
	}
}

func TestStateOfHealth(t *testing.T) {
	spec := specOf(`{"kind":"ConfigMap","metadata":{"name":"x"}}`)
	w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Generation: 2}, Spec: spec}
	for _, c := range []string{workv1.WorkApplied, workv1.WorkAvailable} {
		w.Status.Conditions = append(w.Status.Conditions, metav1.Condition{Type: c, Status: metav1.ConditionTrue, ObservedGeneration: 2})
	}
	if got := stateOf("c1", rollout.Group{}, w, &spec, nil); !got.Available {
		t.Error("a work Available for its generation without a health check is not Available")
	}
	if got := stateOf("c1", rollout.Group{}, w, &spec, func(*workv1.ManifestWork) bool { return false }); got.Available || !got.Updated {
		t.Errorf("a work Available but unhealthy: %+v, want updated and not Available", got)
	}
}
