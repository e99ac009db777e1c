package workview

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// revisionOf is a ControllerRevision of rs numbered n with data, created at
// created, with annotations (key, value, ...).
func revisionOf(t *testing.T, rs *workv1alpha1.ManifestWorkReplicaSet, n int64, name string, data workv1alpha1.RevisionData, created time.Time, kv ...string) appsv1.ControllerRevision {
	t.Helper()
	raw, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	ann := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		ann[kv[i]] = kv[i+1]
	}
	yes := true
	return appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Namespace: rs.Namespace, Name: name, Annotations: ann, CreationTimestamp: metav1.NewTime(created),
		OwnerReferences: []metav1.OwnerReference{{Kind: "ManifestWorkReplicaSet", Name: rs.Name, UID: rs.UID, Controller: &yes}}},
		Revision: n, Data: runtime.RawExtension{Raw: raw}}
}

func carrying(cluster, revision string) workv1.ManifestWork {
	return workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: "hello", Annotations: map[string]string{workv1alpha1.RevisionAnnotation: revision}}}
}

func TestBuildRevisions(t *testing.T) {
	rs := replicaSetOf(workv1alpha1.RolloutStrategy{Type: workv1alpha1.Progressive})
	rs.UID = "uid-1"
	good := workv1alpha1.RevisionData{ManifestWorkTemplate: specOf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"default"},"data":{"v":"1"}}`)}
	// The current spec, stored with other spacing and key order: the same revision.
	current := workv1alpha1.RevisionData{ManifestWorkTemplate: specOf(`{"kind":"ConfigMap", "apiVersion":"v1","metadata":{"namespace":"default","name":"x"}}`)}
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	otherOwner := revisionOf(t, rs, 7, "hello-other", good, t0)
	otherOwner.OwnerReferences[0].UID = "uid-2"
	crs := []appsv1.ControllerRevision{
		revisionOf(t, rs, 2, "hello-b", current, t0.Add(time.Hour), workv1alpha1.RevisionAuthorAnnotation, "bob",
			workv1alpha1.RevisionSummaryAnnotation, "ConfigMap default/x: data.v removed", workv1alpha1.RevisionFailedAnnotation, "c1: Degraded"),
		revisionOf(t, rs, 1, "hello-a", good, t0, workv1alpha1.RevisionAuthorAnnotation, "alice",
			workv1alpha1.RevisionCompleteAnnotation, t0.Add(time.Minute).Format(time.RFC3339)),
		otherOwner,
	}
	works := []workv1.ManifestWork{carrying("c2", "hello-a"), carrying("c1", "hello-a"), carrying("c3", "hello-b")}

	rolledBack := func(reason string) metav1.Condition {
		return metav1.Condition{Type: workv1alpha1.ManifestWorkReplicaSetConditionRolledBack, Status: metav1.ConditionTrue, Reason: reason, ObservedGeneration: rs.Generation}
	}
	for _, tt := range []struct {
		name       string
		conds      []metav1.Condition
		wantStatus [2]string
	}{
		{"no rollback", nil, [2]string{"complete", "current, failed"}},
		{"rolling back", []metav1.Condition{rolledBack(workv1alpha1.ReasonRollingBack)}, [2]string{"complete", "current, failed, rolling back"}},
		{"rolled back", []metav1.Condition{rolledBack(workv1alpha1.ReasonRolledBack)}, [2]string{"complete", "current, failed, rolled back"}},
		{"rollback failed", []metav1.Condition{rolledBack(workv1alpha1.ReasonRollbackFailed)}, [2]string{"complete", "current, failed, rollback failed"}},
		{"a condition of an older generation says nothing", []metav1.Condition{func() metav1.Condition {
			c := rolledBack(workv1alpha1.ReasonRolledBack)
			c.ObservedGeneration = rs.Generation - 1
			return c
		}()}, [2]string{"complete", "current, failed"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rs := rs.DeepCopy()
			rs.Status.Conditions = tt.conds
			revs := BuildRevisions(rs, crs, works)
			if len(revs) != 2 {
				t.Fatalf("%d revisions, want 2 (the other owner's left out): %+v", len(revs), revs)
			}
			a, b := revs[0], revs[1]
			if a.Number != 1 || a.Author != "alice" || a.Clusters != 2 || strings.Join(a.ClusterNames, ",") != "c1,c2" || a.Current || !a.CompleteAt.Equal(t0.Add(time.Minute)) || !a.Created.Equal(t0) {
				t.Errorf("revision 1: %+v", a)
			}
			if b.Number != 2 || b.Author != "bob" || b.Clusters != 1 || !b.Current || b.Failed != "c1: Degraded" || b.Summary != "ConfigMap default/x: data.v removed" {
				t.Errorf("revision 2: %+v", b)
			}
			if got := [2]string{a.Status, b.Status}; got != tt.wantStatus {
				t.Errorf("statuses %q, want %q", got, tt.wantStatus)
			}
			if c := CurrentRevision(revs); c == nil || c.Number != 2 {
				t.Errorf("current revision %+v, want 2", c)
			}
		})
	}
}

func TestBuildRevisionsUnreadableAndNotCurrent(t *testing.T) {
	rs := replicaSetOf(workv1alpha1.RolloutStrategy{})
	cr := revisionOf(t, rs, 1, "hello-a", workv1alpha1.RevisionData{}, time.Now())
	cr.Data.Raw = []byte(`{"manifestWorkTemplate": 3}`)
	revs := BuildRevisions(rs, []appsv1.ControllerRevision{cr}, nil)
	if len(revs) != 1 || revs[0].DataErr == "" || revs[0].Current || revs[0].Status != "-" {
		t.Fatalf("%+v: want one unreadable revision, not current", revs)
	}
	if CurrentRevision(revs) != nil {
		t.Error("an unreadable revision is current")
	}
	if got := RevisionNumbers(revs); got != "1" {
		t.Errorf("RevisionNumbers %q", got)
	}
}

func TestSameRevisionData(t *testing.T) {
	three := int32(3)
	a := workv1alpha1.RevisionData{ManifestWorkTemplate: specOf(`{"a":1,"b":[1,2]}`), ReplicaDivision: &workv1alpha1.ReplicaDivision{TotalReplicas: &three}}
	b := workv1alpha1.RevisionData{ManifestWorkTemplate: specOf(`{ "b": [1, 2], "a": 1 }`), ReplicaDivision: &workv1alpha1.ReplicaDivision{TotalReplicas: &three}}
	if !SameRevisionData(a, b) {
		t.Error("the same JSON in other spacing and order is another revision")
	}
	b.ReplicaDivision = nil
	if SameRevisionData(a, b) {
		t.Error("a replica division removed is the same revision")
	}
	c := workv1alpha1.RevisionData{ManifestWorkTemplate: specOf(`{"a":1,"b":[2,1]}`)}
	if SameRevisionData(workv1alpha1.RevisionData{ManifestWorkTemplate: a.ManifestWorkTemplate}, c) {
		t.Error("a list in another order is the same revision")
	}
}

// A stopped rollout with spec.rollback is waited through once as many
// clusters as failedClusters failed: the hub rolls it back next.
func TestRollbackComing(t *testing.T) {
	view := func(rb *workv1alpha1.RollbackPolicy, phases ...ClusterPhase) *ReplicaSetView {
		rs := replicaSetOf(workv1alpha1.RolloutStrategy{Type: workv1alpha1.Progressive})
		rs.Spec.Rollback = rb
		v := &ReplicaSetView{ReplicaSet: rs}
		for i, p := range phases {
			v.Clusters = append(v.Clusters, ClusterRollout{Cluster: string(rune('a' + i)), Phase: p})
		}
		return v
	}
	one := &workv1alpha1.RollbackPolicy{FailedClusters: intstr.FromInt32(1)}
	two := &workv1alpha1.RollbackPolicy{FailedClusters: intstr.FromInt32(2)}
	half := &workv1alpha1.RollbackPolicy{FailedClusters: intstr.FromString("50%")}
	for _, tt := range []struct {
		name string
		v    *ReplicaSetView
		want bool
	}{
		{"no policy", view(nil, PhaseFailed, PhasePending), false},
		{"one failed of one", view(one, PhaseFailed, PhasePending, PhasePending), true},
		{"the default is one", view(&workv1alpha1.RollbackPolicy{}, PhaseFailed, PhasePending), true},
		{"one failed, two needed", view(two, PhaseFailed, PhaseAvailable, PhasePending), false},
		{"half of those that took it", view(half, PhaseFailed, PhaseAvailable, PhasePending, PhasePending), true},
		{"less than half", view(half, PhaseFailed, PhaseAvailable, PhaseAvailable, PhasePending), false},
		{"none failed", view(one, PhaseApplying, PhasePending), false},
	} {
		if got := tt.v.rollbackComing(); got != tt.want {
			t.Errorf("%s: rollbackComing %t, want %t", tt.name, got, tt.want)
		}
	}
}
