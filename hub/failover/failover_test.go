package failover

import (
	"maps"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

const (
	unreachable = clusterv1.ManagedClusterTaintUnreachable
	unavailable = clusterv1.ManagedClusterTaintUnavailable
)

func TestKeep(t *testing.T) {
	gone := func(name string, at time.Duration) Leaver {
		return Leaver{Cluster: name, Taint: unreachable, Since: t0.Add(at), Grace: DefaultGrace}
	}
	now := t0.Add(time.Minute)
	tests := []struct {
		name     string
		leavers  []Leaver
		chosen   []Candidate
		now      time.Time
		want     map[string]Kept
		wantNext time.Time
	}{
		{name: "a leaver without a health taint is not kept",
			leavers: []Leaver{{Cluster: "c1", Grace: DefaultGrace}}, chosen: []Candidate{{Cluster: "c4"}},
			want: map[string]Kept{}},
		{name: "a tainted leaver waits for a replacement without a copy",
			leavers: []Leaver{gone("c1", 0)}, chosen: []Candidate{{Cluster: "c2", Created: t0.Add(-time.Hour), Ready: true}, {Cluster: "c4"}},
			want: map[string]Kept{"c1": {Taint: unreachable, Replacement: "c4"}}},
		{name: "and for a replacement whose new copy is not ready yet, past the grace too",
			leavers: []Leaver{gone("c1", 0)}, chosen: []Candidate{{Cluster: "c4", Created: t0.Add(time.Minute)}}, now: t0.Add(time.Hour),
			want: map[string]Kept{"c1": {Taint: unreachable, Replacement: "c4"}}},
		{name: "a copy created in the taint's second counts as new",
			leavers: []Leaver{gone("c1", 500*time.Millisecond)}, chosen: []Candidate{{Cluster: "c4", Created: t0}},
			want: map[string]Kept{"c1": {Taint: unreachable, Replacement: "c4"}}},
		{name: "once the replacement is ready the leaver goes",
			leavers: []Leaver{gone("c1", 0)}, chosen: []Candidate{{Cluster: "c4", Created: t0.Add(time.Minute), Ready: true}},
			want: map[string]Kept{}},
		{name: "a cluster that had its copy before the outage is no replacement: kept for the grace",
			leavers: []Leaver{gone("c1", 0)}, chosen: []Candidate{{Cluster: "c2", Created: t0.Add(-time.Hour), Ready: true}},
			want:     map[string]Kept{"c1": {Taint: unreachable, Until: t0.Add(DefaultGrace)}},
			wantNext: t0.Add(DefaultGrace)},
		{name: "an unavailable cluster is kept as an unreachable one is",
			leavers:  []Leaver{{Cluster: "c1", Taint: unavailable, Since: t0, Grace: time.Hour}},
			want:     map[string]Kept{"c1": {Taint: unavailable, Until: t0.Add(time.Hour)}},
			wantNext: t0.Add(time.Hour)},
		{name: "past the grace without a replacement the leaver goes",
			leavers: []Leaver{gone("c1", 0)}, now: t0.Add(DefaultGrace),
			want: map[string]Kept{}},
		{name: "a grace of 0s keeps nothing without a replacement",
			leavers: []Leaver{{Cluster: "c1", Taint: unavailable, Since: t0}},
			want:    map[string]Kept{}},
		{name: "one replacement per leaver, in name order; the next look is the first grace to end",
			leavers: []Leaver{gone("c9", 0), gone("c1", 0), gone("c5", -30*time.Second)}, chosen: []Candidate{{Cluster: "r2"}, {Cluster: "r1", Ready: true}},
			want:     map[string]Kept{"c5": {Taint: unreachable, Replacement: "r2"}, "c9": {Taint: unreachable, Until: t0.Add(DefaultGrace)}},
			wantNext: t0.Add(DefaultGrace)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			at := now
			if !tc.now.IsZero() {
				at = tc.now
			}
			got, next := Keep(tc.leavers, tc.chosen, at)
			if !maps.Equal(got, tc.want) {
				t.Errorf("kept %v, want %v", got, tc.want)
			}
			if !next.Equal(tc.wantNext) {
				t.Errorf("next %v, want %v", next, tc.wantNext)
			}
		})
	}
}

// TestReturnWait checks how long a cluster back from an outage keeps a
// copy its Placement has not chosen again yet.
func TestReturnWait(t *testing.T) {
	now := t0
	cluster := func(status metav1.ConditionStatus, since time.Time, taints ...string) *clusterv1.ManagedCluster {
		mc := &clusterv1.ManagedCluster{Status: clusterv1.ManagedClusterStatus{Conditions: []metav1.Condition{{
			Type: clusterv1.ManagedClusterConditionAvailable, Status: status, LastTransitionTime: metav1.NewTime(since),
		}}}}
		for _, k := range taints {
			mc.Spec.Taints = append(mc.Spec.Taints, clusterv1.Taint{Key: k, Effect: clusterv1.TaintEffectNoSelect, TimeAdded: metav1.NewTime(since)})
		}
		return mc
	}
	for _, tc := range []struct {
		name    string
		mc      *clusterv1.ManagedCluster
		decided time.Time
		want    time.Duration
	}{
		{"back 2 s ago, decided before", cluster(metav1.ConditionTrue, now.Add(-2*time.Second)), now.Add(-time.Minute), ReturnGrace - 2*time.Second},
		{"back 2 s ago, decided in the same second", cluster(metav1.ConditionTrue, now.Add(-2*time.Second)), now.Add(-2 * time.Second), ReturnGrace - 2*time.Second},
		{"back 2 s ago, decided since", cluster(metav1.ConditionTrue, now.Add(-2*time.Second)), now.Add(-time.Second), 0},
		{"back longer than the grace ago", cluster(metav1.ConditionTrue, now.Add(-ReturnGrace-time.Second)), now.Add(-time.Hour), 0},
		{"still unreachable: Keep decides", cluster(metav1.ConditionUnknown, now.Add(-time.Minute), unreachable), now.Add(-time.Hour), 0},
		{"still tainted unavailable though Available again: Keep decides", cluster(metav1.ConditionTrue, now.Add(-time.Second), unavailable), now.Add(-time.Hour), 0},
		{"not available", cluster(metav1.ConditionFalse, now.Add(-time.Second)), now.Add(-time.Hour), 0},
		{"no condition", &clusterv1.ManagedCluster{}, now.Add(-time.Hour), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ReturnWait(tc.mc, tc.decided, now); got != tc.want {
				t.Errorf("ReturnWait = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestHealthTaint(t *testing.T) {
	mc := &clusterv1.ManagedCluster{Spec: clusterv1.ManagedClusterSpec{Taints: []clusterv1.Taint{
		{Key: "gpu", TimeAdded: metav1.NewTime(t0.Add(-time.Hour))},
		{Key: unavailable, TimeAdded: metav1.NewTime(t0)},
		{Key: unreachable, TimeAdded: metav1.NewTime(t0.Add(-time.Minute))},
	}}}
	if key, since := HealthTaint(mc); key != unreachable || !since.Equal(t0.Add(-time.Minute)) {
		t.Errorf("HealthTaint = %s, %s; want the earlier unreachable", key, since)
	}
	if key, _ := HealthTaint(&clusterv1.ManagedCluster{}); key != "" {
		t.Errorf("HealthTaint of an untainted cluster = %q", key)
	}
}

func TestGrace(t *testing.T) {
	placement := func(annotations map[string]string) *clusterv1beta1.Placement {
		p := &clusterv1beta1.Placement{}
		p.Namespace, p.Name, p.Annotations = "apps", "web", annotations
		return p
	}
	for _, tc := range []struct {
		value   *string
		want    time.Duration
		wantErr bool
	}{
		{nil, DefaultGrace, false},
		{ptr("10m"), 10 * time.Minute, false},
		{ptr("0s"), 0, false},
		{ptr("ten minutes"), DefaultGrace, true},
		{ptr("-1m"), DefaultGrace, true},
	} {
		annotations := map[string]string{}
		if tc.value != nil {
			annotations[clusterv1beta1.FailoverGraceAnnotation] = *tc.value
		}
		got, err := Grace(placement(annotations))
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("Grace(%v) = %s, %v; want %s, error %t", annotations, got, err, tc.want, tc.wantErr)
		}
	}
}

func ptr(s string) *string { return &s }
