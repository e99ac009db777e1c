package workview

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// specOf is a ManifestWork spec of the given manifests.
func specOf(raw ...string) workv1.ManifestWorkSpec {
	var s workv1.ManifestWorkSpec
	for _, r := range raw {
		s.Workload.Manifests = append(s.Workload.Manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(r)}})
	}
	return s
}

// replicaSetOf is a replica set over Placement web with the given strategy and conditions.
func replicaSetOf(s workv1alpha1.RolloutStrategy, conds ...metav1.Condition) *workv1alpha1.ManifestWorkReplicaSet {
	return &workv1alpha1.ManifestWorkReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "hello", Generation: 2},
		Spec: workv1alpha1.ManifestWorkReplicaSetSpec{
			ManifestWorkTemplate: specOf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"default"}}`),
			PlacementRefs:        []workv1alpha1.LocalPlacementReference{{Name: "web", RolloutStrategy: s}},
		},
		Status: workv1alpha1.ManifestWorkReplicaSetStatus{Conditions: conds},
	}
}

// workIn is a ManifestWork of the replica set in cluster with spec, written at
// pushed, with the agent's conditions for its generation.
func workIn(cluster string, spec workv1.ManifestWorkSpec, pushed time.Time, applied, available, degraded metav1.ConditionStatus) workv1.ManifestWork {
	w := workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: "hello", Generation: 1,
		Annotations: map[string]string{workv1alpha1.RolloutTimeAnnotation: pushed.UTC().Format(time.RFC3339)}}, Spec: spec}
	for t, s := range map[string]metav1.ConditionStatus{workv1.WorkApplied: applied, workv1.WorkAvailable: available, workv1.WorkDegraded: degraded} {
		if s != "" {
			w.Status.Conditions = append(w.Status.Conditions, metav1.Condition{Type: t, Status: s, ObservedGeneration: 1, Reason: "Test", Message: t + " " + string(s)})
		}
	}
	return w
}

func TestReplicaSetViewRollout(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	progressive := workv1alpha1.RolloutStrategy{Type: workv1alpha1.Progressive, Progressive: &workv1alpha1.RolloutProgressive{
		RolloutConfig: workv1alpha1.RolloutConfig{ProgressDeadline: "1m"}, MaxConcurrency: intstr.FromInt32(1)}}
	all := workv1alpha1.RolloutStrategy{Type: workv1alpha1.All}
	verified := metav1.Condition{Type: workv1alpha1.ManifestWorkReplicaSetConditionPlacementVerified, Status: metav1.ConditionTrue, Reason: workv1alpha1.ReasonAsExpected}
	complete := metav1.Condition{Type: workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut, Status: metav1.ConditionTrue, Reason: workv1alpha1.ReasonComplete, ObservedGeneration: 2}
	rolling := metav1.Condition{Type: workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut, Status: metav1.ConditionFalse, Reason: workv1alpha1.ReasonProgressing, ObservedGeneration: 2}
	cur := replicaSetOf(all).Spec.ManifestWorkTemplate
	old := specOf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"default"},"data":{"v":"1"}}`)
	T, F := metav1.ConditionTrue, metav1.ConditionFalse
	chosen := []string{"c1", "c2", "c3"}
	for _, tc := range []struct {
		name   string
		rs     *workv1alpha1.ManifestWorkReplicaSet
		works  []workv1.ManifestWork
		want   string
		phases []ClusterPhase
	}{
		{"first cluster rolling out", replicaSetOf(progressive, verified, rolling),
			[]workv1.ManifestWork{workIn("c1", cur, now.Add(-10*time.Second), T, "", "")},
			"Progressing 0/3", []ClusterPhase{PhaseApplying, PhasePending, PhasePending}},
		{"second cluster has the old spec", replicaSetOf(progressive, verified, rolling),
			[]workv1.ManifestWork{workIn("c1", cur, now.Add(-time.Minute), T, T, F), workIn("c2", old, now.Add(-time.Hour), T, T, F)},
			"Progressing 1/3", []ClusterPhase{PhaseAvailable, PhasePending, PhasePending}},
		{"stopped: c2 not available within the deadline", replicaSetOf(progressive, verified, rolling),
			[]workv1.ManifestWork{workIn("c1", cur, now.Add(-3*time.Minute), T, T, F), workIn("c2", cur, now.Add(-2*time.Minute), F, "", ""), workIn("c3", old, now.Add(-time.Hour), T, T, F)},
			"Stopped: c2 failed", []ClusterPhase{PhaseAvailable, PhaseFailed, PhasePending}},
		{"degraded fails at once", replicaSetOf(progressive, verified, rolling),
			[]workv1.ManifestWork{workIn("c1", cur, now.Add(-time.Second), T, T, T)},
			"Stopped: c1 failed", []ClusterPhase{PhaseFailed, PhasePending, PhasePending}},
		{"All does not stop on a failure", replicaSetOf(all, verified, rolling),
			[]workv1.ManifestWork{workIn("c1", cur, now, T, T, T), workIn("c2", cur, now, T, T, F)},
			"Progressing 1/3 (c1 failed)", []ClusterPhase{PhaseFailed, PhaseAvailable, PhasePending}},
		{"stopped by the hub's word with nothing left to push", replicaSetOf(progressive, verified, metav1.Condition{Type: workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut,
			Status: metav1.ConditionFalse, Reason: workv1alpha1.ReasonNotAsExpected, ObservedGeneration: 2, Message: "Placement web: rollout stopped, 1 clusters failed, more than maxFailures 0: c3 (Degraded)"}),
			[]workv1.ManifestWork{workIn("c1", cur, now, T, T, F), workIn("c2", cur, now, T, T, F), workIn("c3", cur, now, T, T, T)},
			"Stopped: c3 failed", []ClusterPhase{PhaseAvailable, PhaseAvailable, PhaseFailed}},
		{"complete", replicaSetOf(progressive, verified, complete),
			[]workv1.ManifestWork{workIn("c1", cur, now, T, T, F), workIn("c2", cur, now, T, T, F), workIn("c3", cur, now, T, T, F)},
			"Complete", []ClusterPhase{PhaseAvailable, PhaseAvailable, PhaseAvailable}},
		{"complete by the hub's word while an agent has not reported is not", replicaSetOf(progressive, verified, complete),
			[]workv1.ManifestWork{workIn("c1", cur, now, T, T, F), workIn("c2", cur, now, T, T, F), workIn("c3", cur, now, "", "", "")},
			"Progressing 2/3", []ClusterPhase{PhaseAvailable, PhaseAvailable, PhaseApplying}},
		{"complete for an older generation is not", replicaSetOf(progressive, verified, func() metav1.Condition { c := complete; c.ObservedGeneration = 1; return c }()),
			[]workv1.ManifestWork{workIn("c1", cur, now, T, T, F), workIn("c2", cur, now, T, T, F), workIn("c3", cur, now, T, T, F)},
			"Progressing 3/3", []ClusterPhase{PhaseAvailable, PhaseAvailable, PhaseAvailable}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			placementOf := map[string]string{"c1": "web", "c2": "web", "c3": "web"}
			v := buildReplicaSetView(tc.rs, chosen, placementOf, nil, tc.works, now)
			if v.RenderErr != nil {
				t.Fatal(v.RenderErr)
			}
			if got := v.Rollout(); got != tc.want {
				t.Errorf("rollout = %q, want %q", got, tc.want)
			}
			for i, cr := range v.Clusters {
				if cr.Phase != tc.phases[i] {
					t.Errorf("%s: phase %s (%s), want %s", cr.Cluster, cr.Phase, cr.Why, tc.phases[i])
				}
			}
		})
	}
	v := buildReplicaSetView(replicaSetOf(all, metav1.Condition{Type: workv1alpha1.ManifestWorkReplicaSetConditionPlacementVerified,
		Status: metav1.ConditionFalse, Reason: workv1alpha1.ReasonPlacementDecisionEmpty}), nil, nil, nil, nil, now)
	if got := v.Rollout(); got != "Waiting: no cluster chosen" {
		t.Errorf("rollout = %q", got)
	}
}

func TestReplicasAndImages(t *testing.T) {
	spec := specOf(`{"kind":"Deployment","spec":{"replicas":2,"template":{"spec":{"initContainers":[{"image":"init:1"}],"containers":[{"image":"app:1"},{"image":"app:1"}]}}}}`,
		`{"kind":"ConfigMap"}`)
	r, i := ReplicasAndImages(&spec)
	if r != "2" || i != "init:1,app:1" {
		t.Errorf("got %q %q", r, i)
	}
	if r, i := ReplicasAndImages(nil); r != "?" || i != "?" {
		t.Errorf("nil: %q %q", r, i)
	}
}

func TestReplicaSetTexts(t *testing.T) {
	for _, tc := range []struct {
		s    workv1alpha1.RolloutStrategy
		want string
	}{
		{workv1alpha1.RolloutStrategy{}, "rollout All"},
		{workv1alpha1.RolloutStrategy{Type: workv1alpha1.All, All: &workv1alpha1.RolloutAll{RolloutConfig: workv1alpha1.RolloutConfig{ProgressDeadline: "None"}}}, "rollout All"},
		{workv1alpha1.RolloutStrategy{Type: workv1alpha1.Progressive, Progressive: &workv1alpha1.RolloutProgressive{MaxConcurrency: intstr.FromString("25%"),
			RolloutConfig: workv1alpha1.RolloutConfig{ProgressDeadline: "90s", MinSuccessTime: metav1.Duration{Duration: time.Minute}, MaxFailures: intstr.FromInt32(2)}}},
			"rollout Progressive, 25% at a time, deadline 90s, min success 1m0s, max failures 2"},
		{workv1alpha1.RolloutStrategy{Type: workv1alpha1.ProgressivePerGroup}, "rollout ProgressivePerGroup, max failures 0"},
	} {
		if got := StrategyText(tc.s); got != tc.want {
			t.Errorf("strategyText = %q, want %q", got, tc.want)
		}
	}
	three, zero := int32(3), int32(0)
	d := &workv1alpha1.ReplicaDivision{TotalReplicas: &three, DefaultWeight: &zero, Weights: []workv1alpha1.ClusterWeight{
		{ClusterNames: []string{"c1"}, Weight: 2},
		{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}, Weight: 1},
	}}
	if got, want := DivisionText(d), "3 replicas divided by weight (c1=2, [env=prod]=1, others 0)"; got != want {
		t.Errorf("divisionText = %q, want %q", got, want)
	}
	if got, want := DivisionText(&workv1alpha1.ReplicaDivision{Type: workv1alpha1.ReplicaDivisionAllocatable, Resource: "cpu"}), "the replicas divided by allocatable cpu times weight (others 1)"; got != want {
		t.Errorf("divisionText = %q, want %q", got, want)
	}
	o := workv1alpha1.ClusterOverride{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu"}},
		Images: []workv1alpha1.ImageOverride{{Container: "app", Tag: "1.5"}}, Replicas: &three,
		Env: []workv1alpha1.EnvOverride{{Name: "A", Value: "b"}}, JSONPatch: []workv1alpha1.JSONPatchOperation{{Op: "remove", Path: "/x"}}}
	if got, want := overrideText(1, o), "#1: clusters region=eu: container app tag 1.5; replicas 3; env A=b; 1 JSON patch operation"; got != want {
		t.Errorf("overrideText = %q, want %q", got, want)
	}
}

// A cluster whose work is Available but whose health check does not hold
// is not Available: it is applying until progressDeadline, then failed,
// saying which value is wrong, as the hub counts it.
func TestClassifyClusterHealthCheck(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	spec := specOf(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"}}`)
	work := func(pushed time.Time, available, replicas int64) *workv1.ManifestWork {
		w := workIn("c1", spec, pushed, metav1.ConditionTrue, metav1.ConditionTrue, "")
		w.Status.ResourceStatus.Manifests = []workv1.ManifestCondition{{
			ResourceMeta: workv1.ManifestResourceMeta{Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", Namespace: "default", Name: "web"},
			StatusFeedback: workv1.StatusFeedbackResult{Values: []workv1.FeedbackValue{
				{Name: "AvailableReplicas", Value: workv1.FieldValue{Type: workv1.Integer, Integer: &available}},
				{Name: "Replicas", Value: workv1.FieldValue{Type: workv1.Integer, Integer: &replicas}},
			}},
		}}
		return &w
	}
	hc := &workv1alpha1.HealthCheck{Feedback: []workv1alpha1.FeedbackCheck{{Name: "AvailableReplicas", EqualsValue: "Replicas"}}}
	for _, tt := range []struct {
		name    string
		w       *workv1.ManifestWork
		hc      *workv1alpha1.HealthCheck
		want    ClusterPhase
		wantWhy string
	}{
		{"no health check", work(now, 1, 3), nil, PhaseAvailable, ""},
		{"every replica available", work(now, 3, 3), hc, PhaseAvailable, ""},
		{"half capacity, within the deadline", work(now.Add(-time.Second), 1, 3), hc, PhaseApplying, "its health check does not hold: Deployment default/web: AvailableReplicas is 1, Replicas is 3"},
		{"half capacity, past the deadline", work(now.Add(-2*time.Minute), 1, 3), hc, PhaseFailed, "not Available within progressDeadline 1m0s: its health check does not hold: Deployment default/web: AvailableReplicas is 1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cr := ClusterRollout{Cluster: "c1", work: tt.w, want: &spec}
			phase, why := classifyCluster(cr, tt.hc, time.Minute, now)
			if phase != tt.want || !strings.HasPrefix(why, tt.wantWhy) {
				t.Errorf("got %s %q, want %s %q", phase, why, tt.want, tt.wantWhy)
			}
		})
	}
}
