package rollout

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
func cl(name string, opts ...func(*Cluster)) Cluster {
	c := Cluster{Name: name}
	for _, o := range opts {
		o(&c)
	}
	return c
}

func inGroup(i int32, name string) func(*Cluster) {
	return func(c *Cluster) { c.Group = Group{Index: i, Name: name} }
}

// pushed: has the new spec since t0+at.
func pushed(at time.Duration) func(*Cluster) {
	return func(c *Cluster) { c.Updated, c.PushedAt = true, t0.Add(at) }
}

// available: Applied and Available since t0+at.
func available(at time.Duration) func(*Cluster) {
	return func(c *Cluster) { c.Available, c.AvailableSince = true, t0.Add(at) }
}

func degraded(c *Cluster) { c.Degraded = true }

func TestDecideRollout(t *testing.T) {
	progressive := func(n, failures int) Strategy {
		return Strategy{Kind: workv1alpha1.Progressive, MaxConcurrency: n, MaxFailures: failures}
	}
	tests := []struct {
		name     string
		clusters []Cluster
		st       Strategy
		now      time.Duration
		push     []string
		failed   []string
		stopped  bool
		complete bool
		requeue  time.Duration
	}{
		{name: "All pushes every cluster at once",
			clusters: []Cluster{cl("c"), cl("a"), cl("b", pushed(0))},
			st:       Strategy{Kind: workv1alpha1.All, MaxConcurrency: 3},
			push:     []string{"a", "c"}},
		{name: "All is complete once every cluster succeeded, ignoring minSuccessTime",
			clusters: []Cluster{cl("a", pushed(0), available(time.Second))},
			st:       Strategy{Kind: workv1alpha1.All, MinSuccessTime: time.Hour},
			now:      2 * time.Second, complete: true},
		{name: "All keeps pushing new clusters even past maxFailures",
			clusters: []Cluster{cl("a", pushed(0), degraded), cl("b")},
			st:       Strategy{Kind: workv1alpha1.All},
			push:     []string{"b"}, failed: []string{"a"}, stopped: true},
		{name: "Progressive fills the window in name order",
			clusters: []Cluster{cl("c"), cl("b"), cl("a"), cl("d")},
			st:       progressive(2, 0),
			push:     []string{"a", "b"}},
		{name: "Progressive waits while the window is full",
			clusters: []Cluster{cl("a", pushed(0)), cl("b")},
			st:       progressive(1, 0), now: time.Minute},
		{name: "Progressive moves on once the cluster in flight succeeded",
			clusters: []Cluster{cl("a", pushed(0), available(time.Second)), cl("b"), cl("c")},
			st:       progressive(1, 0), now: time.Minute,
			push: []string{"b"}},
		{name: "Progressive holds a cluster in flight for minSuccessTime and asks to come back then",
			clusters: []Cluster{cl("a", pushed(0), available(10*time.Second)), cl("b")},
			st:       Strategy{Kind: workv1alpha1.Progressive, MaxConcurrency: 1, MinSuccessTime: time.Minute},
			now:      30 * time.Second, requeue: 40 * time.Second},
		{name: "minSuccessTime counts from the push when Available held from before it",
			clusters: []Cluster{cl("a", pushed(time.Minute), available(-time.Hour)), cl("b")},
			st:       Strategy{Kind: workv1alpha1.Progressive, MaxConcurrency: 1, MinSuccessTime: time.Minute},
			now:      90 * time.Second, requeue: 30 * time.Second},
		{name: "minSuccessTime passed: the next cluster goes",
			clusters: []Cluster{cl("a", pushed(0), available(10*time.Second)), cl("b")},
			st:       Strategy{Kind: workv1alpha1.Progressive, MaxConcurrency: 1, MinSuccessTime: time.Minute},
			now:      70 * time.Second, push: []string{"b"}},
		{name: "a degraded cluster within maxFailures frees its slot",
			clusters: []Cluster{cl("a", pushed(0), degraded), cl("b"), cl("c")},
			st:       progressive(1, 1), now: time.Minute,
			push: []string{"b"}, failed: []string{"a"}},
		{name: "failures beyond maxFailures stop the rollout",
			clusters: []Cluster{cl("a", pushed(0), degraded), cl("b", pushed(0), degraded), cl("c")},
			st:       progressive(1, 1), now: time.Minute,
			failed: []string{"a", "b"}, stopped: true},
		{name: "maxFailures 0 stops at the first failure",
			clusters: []Cluster{cl("a", pushed(0), degraded), cl("b")},
			st:       progressive(3, 0),
			failed:   []string{"a"}, stopped: true},
		{name: "progressDeadline: in flight before it, with a timer at it",
			clusters: []Cluster{cl("a", pushed(0)), cl("b")},
			st:       Strategy{Kind: workv1alpha1.Progressive, MaxConcurrency: 1, MaxFailures: 1, ProgressDeadline: time.Minute},
			now:      20 * time.Second, requeue: 40 * time.Second},
		{name: "progressDeadline passed: failed, and the next cluster goes within maxFailures",
			clusters: []Cluster{cl("a", pushed(0)), cl("b")},
			st:       Strategy{Kind: workv1alpha1.Progressive, MaxConcurrency: 1, MaxFailures: 1, ProgressDeadline: time.Minute},
			now:      time.Minute, push: []string{"b"}, failed: []string{"a"}},
		{name: "no progressDeadline: a slow cluster holds the window for good",
			clusters: []Cluster{cl("a", pushed(0)), cl("b")},
			st:       progressive(1, 5), now: 100 * time.Hour},
		{name: "Progressive with everything succeeded is complete",
			clusters: []Cluster{cl("a", pushed(0), available(0)), cl("b", pushed(0), available(0))},
			st:       progressive(1, 0), now: time.Second, complete: true},
		{name: "a failed cluster within maxFailures still completes the rollout",
			clusters: []Cluster{cl("a", pushed(0), degraded), cl("b", pushed(0), available(0))},
			st:       progressive(1, 1), now: time.Second, failed: []string{"a"}, complete: true},
		{name: "Progressive orders by decision group before name",
			clusters: []Cluster{cl("a", inGroup(1, "")), cl("z", inGroup(0, ""))},
			st:       progressive(1, 0), push: []string{"z"}},
		{name: "ProgressivePerGroup pushes the whole first group",
			clusters: []Cluster{cl("a", inGroup(0, "")), cl("b", inGroup(1, "")), cl("c", inGroup(0, ""))},
			st:       Strategy{Kind: workv1alpha1.ProgressivePerGroup},
			push:     []string{"a", "c"}},
		{name: "ProgressivePerGroup waits for the whole group",
			clusters: []Cluster{cl("a", inGroup(0, ""), pushed(0), available(0)), cl("c", inGroup(0, ""), pushed(0)), cl("b", inGroup(1, ""))},
			st:       Strategy{Kind: workv1alpha1.ProgressivePerGroup}, now: time.Second},
		{name: "ProgressivePerGroup moves to the next group once the first succeeded",
			clusters: []Cluster{cl("a", inGroup(0, ""), pushed(0), available(0)), cl("c", inGroup(0, ""), pushed(0), available(0)), cl("b", inGroup(1, "")), cl("d", inGroup(1, ""))},
			st:       Strategy{Kind: workv1alpha1.ProgressivePerGroup}, now: time.Second,
			push: []string{"b", "d"}},
		{name: "ProgressivePerGroup pushes a cluster that joined the group in flight",
			clusters: []Cluster{cl("a", inGroup(0, ""), pushed(0)), cl("c", inGroup(0, "")), cl("b", inGroup(1, ""))},
			st:       Strategy{Kind: workv1alpha1.ProgressivePerGroup}, now: time.Second,
			push: []string{"c"}},
		{name: "mandatory groups go first, whole, by name",
			clusters: []Cluster{cl("a", inGroup(0, "canary")), cl("b", inGroup(1, "prod")), cl("c", inGroup(1, "prod"))},
			st: Strategy{Kind: workv1alpha1.Progressive, MaxConcurrency: 1,
				Mandatory: []workv1alpha1.MandatoryDecisionGroup{{GroupName: "prod"}}},
			push: []string{"b", "c"}},
		{name: "mandatory groups by index, one at a time",
			clusters: []Cluster{cl("a", inGroup(0, "")), cl("b", inGroup(1, "")), cl("c", inGroup(2, ""))},
			st: Strategy{Kind: workv1alpha1.ProgressivePerGroup,
				Mandatory: []workv1alpha1.MandatoryDecisionGroup{{GroupIndex: 2}, {GroupIndex: 1}}},
			push: []string{"c"}},
		{name: "after the mandatory groups succeeded the rest follows the strategy",
			clusters: []Cluster{cl("a", inGroup(0, "")), cl("b", inGroup(0, "")), cl("c", inGroup(2, ""), pushed(0), available(0))},
			st: Strategy{Kind: workv1alpha1.Progressive, MaxConcurrency: 1,
				Mandatory: []workv1alpha1.MandatoryDecisionGroup{{GroupIndex: 2}}},
			now: time.Second, push: []string{"a"}},
		{name: "a mandatory group tolerates no failure, whatever maxFailures says",
			clusters: []Cluster{cl("a", inGroup(0, "")), cl("c", inGroup(2, ""), pushed(0), degraded)},
			st: Strategy{Kind: workv1alpha1.Progressive, MaxConcurrency: 1, MaxFailures: 5,
				Mandatory: []workv1alpha1.MandatoryDecisionGroup{{GroupIndex: 2}}},
			failed: []string{"c"}, stopped: true},
		{name: "a mandatory group that matches no cluster is skipped",
			clusters: []Cluster{cl("a")},
			st: Strategy{Kind: workv1alpha1.Progressive, MaxConcurrency: 1,
				Mandatory: []workv1alpha1.MandatoryDecisionGroup{{GroupName: "nowhere"}}},
			push: []string{"a"}},
		{name: "no clusters: complete, nothing to do",
			st: progressive(1, 0), complete: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Decide(tc.clusters, tc.st, t0.Add(tc.now))
			var failedNames []string
			for _, f := range got.Failed {
				failedNames = append(failedNames, f.Cluster)
			}
			slices.Sort(failedNames)
			if !slices.Equal(got.Push, tc.push) {
				t.Errorf("push = %v, want %v", got.Push, tc.push)
			}
			if !slices.Equal(failedNames, tc.failed) {
				t.Errorf("failed = %v, want %v", failedNames, tc.failed)
			}
			if got.Stopped != tc.stopped || got.Complete != tc.complete {
				t.Errorf("stopped, complete = %v, %v (%q); want %v, %v", got.Stopped, got.Complete, got.StopReason, tc.stopped, tc.complete)
			}
			if got.RequeueAfter != tc.requeue {
				t.Errorf("requeueAfter = %v, want %v", got.RequeueAfter, tc.requeue)
			}
		})
	}
}

func TestDecideRolloutSaysWhyClustersFailed(t *testing.T) {
	st := Strategy{Kind: workv1alpha1.Progressive, MaxConcurrency: 2, ProgressDeadline: time.Minute}
	got := Decide([]Cluster{cl("slow", pushed(0)), cl("bad", pushed(0), degraded)}, st, t0.Add(2*time.Minute))
	want := []Failure{{"slow", "not Available within progressDeadline 1m0s"}, {"bad", "Degraded"}}
	if !slices.Equal(got.Failed, want) {
		t.Errorf("failed = %v, want %v", got.Failed, want)
	}
	if !got.Stopped || !strings.Contains(got.StopReason, "2 clusters failed, more than maxFailures 0") {
		t.Errorf("stopped %v, %q; want stopped naming the count", got.Stopped, got.StopReason)
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
		want    Strategy
		wantErr string
	}{
		{name: "empty is All", total: 4, want: Strategy{Kind: workv1alpha1.All, MaxConcurrency: 4}},
		{name: "All with a deadline and None",
			rs:    workv1alpha1.RolloutStrategy{Type: workv1alpha1.All, All: &workv1alpha1.RolloutAll{RolloutConfig: workv1alpha1.RolloutConfig{ProgressDeadline: "90s"}}},
			total: 2, want: Strategy{Kind: workv1alpha1.All, MaxConcurrency: 2, ProgressDeadline: 90 * time.Second}},
		{name: "Progressive defaults maxConcurrency to clustersPerDecisionGroup",
			rs:    workv1alpha1.RolloutStrategy{Type: workv1alpha1.Progressive},
			total: 10, perGrp: pct("25%"), want: Strategy{Kind: workv1alpha1.Progressive, MaxConcurrency: 3}},
		{name: "Progressive maxConcurrency percent rounds up, maxFailures percent rounds down",
			rs: workv1alpha1.RolloutStrategy{Type: workv1alpha1.Progressive, Progressive: &workv1alpha1.RolloutProgressive{
				MaxConcurrency: pct("15%"),
				RolloutConfig:  workv1alpha1.RolloutConfig{MaxFailures: pct("15%"), MinSuccessTime: metav1.Duration{Duration: time.Minute}, ProgressDeadline: "None"}}},
			total: 10, want: Strategy{Kind: workv1alpha1.Progressive, MaxConcurrency: 2, MaxFailures: 1, MinSuccessTime: time.Minute}},
		{name: "Progressive maxConcurrency number",
			rs:    workv1alpha1.RolloutStrategy{Type: workv1alpha1.Progressive, Progressive: &workv1alpha1.RolloutProgressive{MaxConcurrency: num(1)}},
			total: 10, perGrp: pct("100%"), want: Strategy{Kind: workv1alpha1.Progressive, MaxConcurrency: 1}},
		{name: "maxConcurrency is at least one",
			rs:    workv1alpha1.RolloutStrategy{Type: workv1alpha1.Progressive, Progressive: &workv1alpha1.RolloutProgressive{MaxConcurrency: pct("10%")}},
			total: 0, want: Strategy{Kind: workv1alpha1.Progressive, MaxConcurrency: 1}},
		{name: "ProgressivePerGroup keeps its mandatory groups",
			rs: workv1alpha1.RolloutStrategy{Type: workv1alpha1.ProgressivePerGroup, ProgressivePerGroup: &workv1alpha1.RolloutProgressivePerGroup{
				MandatoryDecisionGroups: []workv1alpha1.MandatoryDecisionGroup{{GroupName: "canary"}}}},
			total: 3, want: Strategy{Kind: workv1alpha1.ProgressivePerGroup, MaxConcurrency: 3,
				Mandatory: []workv1alpha1.MandatoryDecisionGroup{{GroupName: "canary"}}}},
		{name: "a bad progressDeadline names the field",
			rs:      workv1alpha1.RolloutStrategy{Type: workv1alpha1.All, All: &workv1alpha1.RolloutAll{RolloutConfig: workv1alpha1.RolloutConfig{ProgressDeadline: "soon"}}},
			wantErr: `spec.placementRefs[0].rolloutStrategy: progressDeadline "soon" is neither None nor a positive duration`},
		{name: "an unknown type",
			rs:      workv1alpha1.RolloutStrategy{Type: "Sometimes"},
			wantErr: `spec.placementRefs[0].rolloutStrategy.type: "Sometimes" is not All`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ResolveStrategy(tc.rs, tc.total, tc.perGrp, "spec.placementRefs[0].rolloutStrategy")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Kind != tc.want.Kind || got.MaxConcurrency != tc.want.MaxConcurrency || got.MaxFailures != tc.want.MaxFailures ||
				got.MinSuccessTime != tc.want.MinSuccessTime || got.ProgressDeadline != tc.want.ProgressDeadline || !slices.Equal(got.Mandatory, tc.want.Mandatory) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
