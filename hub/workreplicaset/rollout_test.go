package workreplicaset

import (
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// Builders: a cluster in group 0 without the new spec, and its changes.
func cl(name string, opts ...func(*clusterState)) clusterState {
	c := clusterState{name: name}
	for _, o := range opts {
		o(&c)
	}
	return c
}

func inGroup(i int32, name string) func(*clusterState) {
	return func(c *clusterState) { c.group = group{index: i, name: name} }
}

// pushed: has the new spec since t0+at.
func pushed(at time.Duration) func(*clusterState) {
	return func(c *clusterState) { c.updated, c.pushedAt = true, t0.Add(at) }
}

// available: Applied and Available since t0+at.
func available(at time.Duration) func(*clusterState) {
	return func(c *clusterState) { c.available, c.availableSince = true, t0.Add(at) }
}

func degraded(c *clusterState) { c.degraded = true }

func TestDecideRollout(t *testing.T) {
	progressive := func(n, failures int) strategy {
		return strategy{kind: workv1alpha1.Progressive, maxConcurrency: n, maxFailures: failures}
	}
	tests := []struct {
		name     string
		clusters []clusterState
		st       strategy
		now      time.Duration
		push     []string
		failed   []string
		stopped  bool
		complete bool
		requeue  time.Duration
	}{
		{name: "All pushes every cluster at once",
			clusters: []clusterState{cl("c"), cl("a"), cl("b", pushed(0))},
			st:       strategy{kind: workv1alpha1.All, maxConcurrency: 3},
			push:     []string{"a", "c"}},
		{name: "All is complete once every cluster succeeded, ignoring minSuccessTime",
			clusters: []clusterState{cl("a", pushed(0), available(time.Second))},
			st:       strategy{kind: workv1alpha1.All, minSuccessTime: time.Hour},
			now:      2 * time.Second, complete: true},
		{name: "All keeps pushing new clusters even past maxFailures",
			clusters: []clusterState{cl("a", pushed(0), degraded), cl("b")},
			st:       strategy{kind: workv1alpha1.All},
			push:     []string{"b"}, failed: []string{"a"}, stopped: true},
		{name: "Progressive fills the window in name order",
			clusters: []clusterState{cl("c"), cl("b"), cl("a"), cl("d")},
			st:       progressive(2, 0),
			push:     []string{"a", "b"}},
		{name: "Progressive waits while the window is full",
			clusters: []clusterState{cl("a", pushed(0)), cl("b")},
			st:       progressive(1, 0), now: time.Minute},
		{name: "Progressive moves on once the cluster in flight succeeded",
			clusters: []clusterState{cl("a", pushed(0), available(time.Second)), cl("b"), cl("c")},
			st:       progressive(1, 0), now: time.Minute,
			push: []string{"b"}},
		{name: "Progressive holds a cluster in flight for minSuccessTime and asks to come back then",
			clusters: []clusterState{cl("a", pushed(0), available(10*time.Second)), cl("b")},
			st:       strategy{kind: workv1alpha1.Progressive, maxConcurrency: 1, minSuccessTime: time.Minute},
			now:      30 * time.Second, requeue: 40 * time.Second},
		{name: "minSuccessTime counts from the push when Available held from before it",
			clusters: []clusterState{cl("a", pushed(time.Minute), available(-time.Hour)), cl("b")},
			st:       strategy{kind: workv1alpha1.Progressive, maxConcurrency: 1, minSuccessTime: time.Minute},
			now:      90 * time.Second, requeue: 30 * time.Second},
		{name: "minSuccessTime passed: the next cluster goes",
			clusters: []clusterState{cl("a", pushed(0), available(10*time.Second)), cl("b")},
			st:       strategy{kind: workv1alpha1.Progressive, maxConcurrency: 1, minSuccessTime: time.Minute},
			now:      70 * time.Second, push: []string{"b"}},
		{name: "a degraded cluster within maxFailures frees its slot",
			clusters: []clusterState{cl("a", pushed(0), degraded), cl("b"), cl("c")},
			st:       progressive(1, 1), now: time.Minute,
			push: []string{"b"}, failed: []string{"a"}},
		{name: "failures beyond maxFailures stop the rollout",
			clusters: []clusterState{cl("a", pushed(0), degraded), cl("b", pushed(0), degraded), cl("c")},
			st:       progressive(1, 1), now: time.Minute,
			failed: []string{"a", "b"}, stopped: true},
		{name: "maxFailures 0 stops at the first failure",
			clusters: []clusterState{cl("a", pushed(0), degraded), cl("b")},
			st:       progressive(3, 0),
			failed:   []string{"a"}, stopped: true},
		{name: "progressDeadline: in flight before it, with a timer at it",
			clusters: []clusterState{cl("a", pushed(0)), cl("b")},
			st:       strategy{kind: workv1alpha1.Progressive, maxConcurrency: 1, maxFailures: 1, progressDeadline: time.Minute},
			now:      20 * time.Second, requeue: 40 * time.Second},
		{name: "progressDeadline passed: failed, and the next cluster goes within maxFailures",
			clusters: []clusterState{cl("a", pushed(0)), cl("b")},
			st:       strategy{kind: workv1alpha1.Progressive, maxConcurrency: 1, maxFailures: 1, progressDeadline: time.Minute},
			now:      time.Minute, push: []string{"b"}, failed: []string{"a"}},
		{name: "no progressDeadline: a slow cluster holds the window for good",
			clusters: []clusterState{cl("a", pushed(0)), cl("b")},
			st:       progressive(1, 5), now: 100 * time.Hour},
		{name: "Progressive with everything succeeded is complete",
			clusters: []clusterState{cl("a", pushed(0), available(0)), cl("b", pushed(0), available(0))},
			st:       progressive(1, 0), now: time.Second, complete: true},
		{name: "a failed cluster within maxFailures still completes the rollout",
			clusters: []clusterState{cl("a", pushed(0), degraded), cl("b", pushed(0), available(0))},
			st:       progressive(1, 1), now: time.Second, failed: []string{"a"}, complete: true},
		{name: "Progressive orders by decision group before name",
			clusters: []clusterState{cl("a", inGroup(1, "")), cl("z", inGroup(0, ""))},
			st:       progressive(1, 0), push: []string{"z"}},
		{name: "ProgressivePerGroup pushes the whole first group",
			clusters: []clusterState{cl("a", inGroup(0, "")), cl("b", inGroup(1, "")), cl("c", inGroup(0, ""))},
			st:       strategy{kind: workv1alpha1.ProgressivePerGroup},
			push:     []string{"a", "c"}},
		{name: "ProgressivePerGroup waits for the whole group",
			clusters: []clusterState{cl("a", inGroup(0, ""), pushed(0), available(0)), cl("c", inGroup(0, ""), pushed(0)), cl("b", inGroup(1, ""))},
			st:       strategy{kind: workv1alpha1.ProgressivePerGroup}, now: time.Second},
		{name: "ProgressivePerGroup moves to the next group once the first succeeded",
			clusters: []clusterState{cl("a", inGroup(0, ""), pushed(0), available(0)), cl("c", inGroup(0, ""), pushed(0), available(0)), cl("b", inGroup(1, "")), cl("d", inGroup(1, ""))},
			st:       strategy{kind: workv1alpha1.ProgressivePerGroup}, now: time.Second,
			push: []string{"b", "d"}},
		{name: "ProgressivePerGroup pushes a cluster that joined the group in flight",
			clusters: []clusterState{cl("a", inGroup(0, ""), pushed(0)), cl("c", inGroup(0, "")), cl("b", inGroup(1, ""))},
			st:       strategy{kind: workv1alpha1.ProgressivePerGroup}, now: time.Second,
			push: []string{"c"}},
		{name: "mandatory groups go first, whole, by name",
			clusters: []clusterState{cl("a", inGroup(0, "canary")), cl("b", inGroup(1, "prod")), cl("c", inGroup(1, "prod"))},
			st: strategy{kind: workv1alpha1.Progressive, maxConcurrency: 1,
				mandatory: []workv1alpha1.MandatoryDecisionGroup{{GroupName: "prod"}}},
			push: []string{"b", "c"}},
		{name: "mandatory groups by index, one at a time",
			clusters: []clusterState{cl("a", inGroup(0, "")), cl("b", inGroup(1, "")), cl("c", inGroup(2, ""))},
			st: strategy{kind: workv1alpha1.ProgressivePerGroup,
				mandatory: []workv1alpha1.MandatoryDecisionGroup{{GroupIndex: 2}, {GroupIndex: 1}}},
			push: []string{"c"}},
		{name: "after the mandatory groups succeeded the rest follows the strategy",
			clusters: []clusterState{cl("a", inGroup(0, "")), cl("b", inGroup(0, "")), cl("c", inGroup(2, ""), pushed(0), available(0))},
			st: strategy{kind: workv1alpha1.Progressive, maxConcurrency: 1,
				mandatory: []workv1alpha1.MandatoryDecisionGroup{{GroupIndex: 2}}},
			now: time.Second, push: []string{"a"}},
		{name: "a mandatory group tolerates no failure, whatever maxFailures says",
			clusters: []clusterState{cl("a", inGroup(0, "")), cl("c", inGroup(2, ""), pushed(0), degraded)},
			st: strategy{kind: workv1alpha1.Progressive, maxConcurrency: 1, maxFailures: 5,
				mandatory: []workv1alpha1.MandatoryDecisionGroup{{GroupIndex: 2}}},
			failed: []string{"c"}, stopped: true},
		{name: "a mandatory group that matches no cluster is skipped",
			clusters: []clusterState{cl("a")},
			st: strategy{kind: workv1alpha1.Progressive, maxConcurrency: 1,
				mandatory: []workv1alpha1.MandatoryDecisionGroup{{GroupName: "nowhere"}}},
			push: []string{"a"}},
		{name: "no clusters: complete, nothing to do",
			st: progressive(1, 0), complete: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := decideRollout(tc.clusters, tc.st, t0.Add(tc.now))
			var failedNames []string
			for _, f := range got.failed {
				failedNames = append(failedNames, f.cluster)
			}
			slices.Sort(failedNames)
			if !slices.Equal(got.push, tc.push) {
				t.Errorf("push = %v, want %v", got.push, tc.push)
			}
			if !slices.Equal(failedNames, tc.failed) {
				t.Errorf("failed = %v, want %v", failedNames, tc.failed)
			}
			if got.stopped != tc.stopped || got.complete != tc.complete {
				t.Errorf("stopped, complete = %v, %v (%q); want %v, %v", got.stopped, got.complete, got.stopReason, tc.stopped, tc.complete)
			}
			if got.requeueAfter != tc.requeue {
				t.Errorf("requeueAfter = %v, want %v", got.requeueAfter, tc.requeue)
			}
		})
	}
}

func TestDecideRolloutSaysWhyClustersFailed(t *testing.T) {
	st := strategy{kind: workv1alpha1.Progressive, maxConcurrency: 2, progressDeadline: time.Minute}
	got := decideRollout([]clusterState{cl("slow", pushed(0)), cl("bad", pushed(0), degraded)}, st, t0.Add(2*time.Minute))
	want := []failure{{"slow", "not Available within progressDeadline 1m0s"}, {"bad", "Degraded"}}
	if !slices.Equal(got.failed, want) {
		t.Errorf("failed = %v, want %v", got.failed, want)
	}
	if !got.stopped || !strings.Contains(got.stopReason, "2 clusters failed, more than maxFailures 0") {
		t.Errorf("stopped %v, %q; want stopped naming the count", got.stopped, got.stopReason)
	}
}

func TestResolveStrategy(t *testing.T) {
	pct := intstr.FromString
	num := intstr.FromInt32
	tests := []struct {
		name    string
		rs      workv1alpha1.RolloutStrategy
		total   int
		perGrp  intstr.IntOrString
		want    strategy
		wantErr string
	}{
		{name: "empty is All", total: 4, want: strategy{kind: workv1alpha1.All, maxConcurrency: 4}},
		{name: "All with a deadline and None",
			rs:    workv1alpha1.RolloutStrategy{Type: workv1alpha1.All, All: &workv1alpha1.RolloutAll{RolloutConfig: workv1alpha1.RolloutConfig{ProgressDeadline: "90s"}}},
			total: 2, want: strategy{kind: workv1alpha1.All, maxConcurrency: 2, progressDeadline: 90 * time.Second}},
		{name: "Progressive defaults maxConcurrency to clustersPerDecisionGroup",
			rs:    workv1alpha1.RolloutStrategy{Type: workv1alpha1.Progressive},
			total: 10, perGrp: pct("25%"), want: strategy{kind: workv1alpha1.Progressive, maxConcurrency: 3}},
		{name: "Progressive maxConcurrency percent rounds up, maxFailures percent rounds down",
			rs: workv1alpha1.RolloutStrategy{Type: workv1alpha1.Progressive, Progressive: &workv1alpha1.RolloutProgressive{
				MaxConcurrency: pct("15%"),
				RolloutConfig:  workv1alpha1.RolloutConfig{MaxFailures: pct("15%"), MinSuccessTime: metav1.Duration{Duration: time.Minute}, ProgressDeadline: "None"}}},
			total: 10, want: strategy{kind: workv1alpha1.Progressive, maxConcurrency: 2, maxFailures: 1, minSuccessTime: time.Minute}},
		{name: "Progressive maxConcurrency number",
			rs:    workv1alpha1.RolloutStrategy{Type: workv1alpha1.Progressive, Progressive: &workv1alpha1.RolloutProgressive{MaxConcurrency: num(1)}},
			total: 10, perGrp: pct("100%"), want: strategy{kind: workv1alpha1.Progressive, maxConcurrency: 1}},
		{name: "maxConcurrency is at least one",
			rs:    workv1alpha1.RolloutStrategy{Type: workv1alpha1.Progressive, Progressive: &workv1alpha1.RolloutProgressive{MaxConcurrency: pct("10%")}},
			total: 0, want: strategy{kind: workv1alpha1.Progressive, maxConcurrency: 1}},
		{name: "ProgressivePerGroup keeps its mandatory groups",
			rs: workv1alpha1.RolloutStrategy{Type: workv1alpha1.ProgressivePerGroup, ProgressivePerGroup: &workv1alpha1.RolloutProgressivePerGroup{
				MandatoryDecisionGroups: []workv1alpha1.MandatoryDecisionGroup{{GroupName: "canary"}}}},
			total: 3, want: strategy{kind: workv1alpha1.ProgressivePerGroup, maxConcurrency: 3,
				mandatory: []workv1alpha1.MandatoryDecisionGroup{{GroupName: "canary"}}}},
		{name: "a bad progressDeadline names the field",
			rs:      workv1alpha1.RolloutStrategy{Type: workv1alpha1.All, All: &workv1alpha1.RolloutAll{RolloutConfig: workv1alpha1.RolloutConfig{ProgressDeadline: "soon"}}},
			wantErr: `spec.placementRefs[0].rolloutStrategy: progressDeadline "soon" is neither None nor a positive duration`},
		{name: "an unknown type",
			rs:      workv1alpha1.RolloutStrategy{Type: "Sometimes"},
			wantErr: `spec.placementRefs[0].rolloutStrategy.type: "Sometimes" is not All`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := resolveStrategy(tc.rs, tc.total, tc.perGrp, "spec.placementRefs[0].rolloutStrategy")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.kind != tc.want.kind || got.maxConcurrency != tc.want.maxConcurrency || got.maxFailures != tc.want.maxFailures ||
				got.minSuccessTime != tc.want.minSuccessTime || got.progressDeadline != tc.want.progressDeadline || !slices.Equal(got.mandatory, tc.want.mandatory) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
