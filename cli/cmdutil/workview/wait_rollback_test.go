package workview

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// During a rollback each cluster's line names the revision its work
// carries, and whether its agent reports it for the work's generation.
func TestRevisionLine(t *testing.T) {
	now := time.Now()
	numbers := map[string]int64{"web-a": 1, "web-b": 2}
	on := func(rev string, w ClusterRollout) ClusterRollout {
		w.work.Annotations[workv1alpha1.RevisionAnnotation] = rev
		return w
	}
	work := func(applied, available metav1.ConditionStatus) ClusterRollout {
		w := workIn("c1", specOf(), now, applied, available, "")
		return ClusterRollout{Cluster: "c1", work: &w}
	}
	stale := work(metav1.ConditionTrue, metav1.ConditionTrue)
	stale.work.Generation = 2
	for _, tt := range []struct {
		cr   ClusterRollout
		want string
	}{
		{on("web-a", work(metav1.ConditionTrue, metav1.ConditionTrue)), "Cluster c1: revision 1: applied and available"},
		{on("web-b", work(metav1.ConditionTrue, metav1.ConditionFalse)), "Cluster c1: revision 2: "},
		{on("web-a", stale), "Cluster c1: revision 1: its agent has not reported it Applied yet"},
		{on("web-gone", work(metav1.ConditionTrue, metav1.ConditionTrue)), "Cluster c1: revision ?: applied and available"},
		{ClusterRollout{Cluster: "c2"}, "Cluster c2: no ManifestWork (it never took the failed revision)"},
	} {
		if got := revisionLine(tt.cr, numbers); !strings.HasPrefix(got, tt.want) || (strings.HasSuffix(tt.want, " ") && got == tt.want) {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

func TestRollbackErrorSaysWhatToDo(t *testing.T) {
	err := &rollbackError{key: client.ObjectKey{Namespace: "apps", Name: "web"}, condition: metav1.Condition{
		Reason: workv1alpha1.ReasonRollbackFailed, Message: "revision 1 failed on c1 too"}}
	for _, want := range []string{"the current revision of ManifestWorkReplicaSet apps/web failed, and the hub's rollback failed too (it stopped there): revision 1 failed on c1 too",
		"rollout history web -n apps", "rollout undo web -n apps"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err.Error(), want)
		}
	}
}

// A replica set whose current revision failed sums its rollout up by the
// reason of condition RolledBack, for the generation it speaks of.
func TestRolloutSaysRollback(t *testing.T) {
	rs := replicaSetOf(workv1alpha1.RolloutStrategy{Type: workv1alpha1.Progressive})
	rs.Status.Conditions = []metav1.Condition{{Type: workv1alpha1.ManifestWorkReplicaSetConditionRolledBack, Status: metav1.ConditionFalse,
		Reason: workv1alpha1.ReasonRollingBack, ObservedGeneration: rs.Generation}}
	v := &ReplicaSetView{ReplicaSet: rs, Clusters: []ClusterRollout{{Cluster: "c1", Phase: PhasePending}}}
	if got := v.Rollout(); got != workv1alpha1.ReasonRollingBack {
		t.Errorf("Rollout %q, want %s", got, workv1alpha1.ReasonRollingBack)
	}
	rs.Generation++ // a new spec: the condition speaks of the one before
	if got := v.Rollout(); got == workv1alpha1.ReasonRollingBack {
		t.Errorf("Rollout %q for a newer spec", got)
	}
}

// Just after a resume the hub's PlacementRolledOut still says the rollout
// stopped for the pause: that is no stop, until the hub says it again.
func TestRolloutAfterResume(t *testing.T) {
	rs := replicaSetOf(workv1alpha1.RolloutStrategy{Type: workv1alpha1.Progressive}, metav1.Condition{
		Type: workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut, Status: metav1.ConditionFalse, Reason: workv1alpha1.ReasonProgressing,
		ObservedGeneration: 2, Message: "Placement web: rollout stopped, paused (annotation " + workv1alpha1.PausedAnnotation + "=true)"})
	v := &ReplicaSetView{ReplicaSet: rs, Clusters: []ClusterRollout{{Cluster: "c1", Phase: PhaseApplying}, {Cluster: "c2", Phase: PhasePending}}}
	if got := v.Rollout(); got != "Progressing 0/2" {
		t.Errorf("resumed: Rollout %q, want Progressing 0/2", got)
	}
	rs.Annotations = map[string]string{workv1alpha1.PausedAnnotation: "true"}
	if got := v.Rollout(); !strings.HasPrefix(got, "Stopped") {
		t.Errorf("paused: Rollout %q, want the hub's stop", got)
	}
}
