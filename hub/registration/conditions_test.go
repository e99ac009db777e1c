package registration

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
)

func TestAcceptedCondition(t *testing.T) {
	accepted := &metav1.Condition{Type: clusterv1.ManagedClusterConditionHubAccepted, Status: metav1.ConditionTrue}
	tests := []struct {
		name       string
		accepts    bool
		current    *metav1.Condition
		wantNil    bool
		wantStatus metav1.ConditionStatus
		wantReason string
	}{
		{name: "never accepted, not accepting: no condition", accepts: false, current: nil, wantNil: true},
		{name: "accepting a new cluster", accepts: true, current: nil, wantStatus: metav1.ConditionTrue, wantReason: clusterv1.ReasonHubClusterAdminAccepted},
		{name: "still accepted", accepts: true, current: accepted, wantStatus: metav1.ConditionTrue, wantReason: clusterv1.ReasonHubClusterAdminAccepted},
		{name: "denied after acceptance", accepts: false, current: accepted, wantStatus: metav1.ConditionFalse, wantReason: clusterv1.ReasonHubClusterAdminDenied},
		{name: "accepted again after denial", accepts: true,
			current:    &metav1.Condition{Type: clusterv1.ManagedClusterConditionHubAccepted, Status: metav1.ConditionFalse, Reason: clusterv1.ReasonHubClusterAdminDenied},
			wantStatus: metav1.ConditionTrue, wantReason: clusterv1.ReasonHubClusterAdminAccepted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := acceptedCondition(tt.accepts, tt.current)
			if tt.wantNil {
				if got != nil {
					t.Fatalf("got %+v, want no condition", got)
				}
				return
			}
			if got == nil {
				t.Fatal("got no condition")
			}
			if got.Type != clusterv1.ManagedClusterConditionHubAccepted || got.Status != tt.wantStatus || got.Reason != tt.wantReason || got.ObservedGeneration != 0 {
				t.Errorf("got %s=%s reason %s generation %d, want %s=%s reason %s and no generation",
					got.Type, got.Status, got.Reason, got.ObservedGeneration, clusterv1.ManagedClusterConditionHubAccepted, tt.wantStatus, tt.wantReason)
			}
		})
	}
}

func TestLeaseCheck(t *testing.T) {
	renewed := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name        string
		seconds     int32
		now         time.Time
		wantExpired bool
		wantLeft    time.Duration
	}{
		{name: "just renewed", seconds: 60, now: renewed, wantLeft: 5 * time.Minute},
		{name: "four periods late is fine", seconds: 60, now: renewed.Add(4 * time.Minute), wantLeft: time.Minute},
		{name: "five periods late has expired", seconds: 60, now: renewed.Add(5 * time.Minute), wantExpired: true},
		{name: "long gone", seconds: 60, now: renewed.Add(time.Hour), wantExpired: true},
		{name: "short lease", seconds: 1, now: renewed.Add(4 * time.Second), wantLeft: time.Second},
		{name: "short lease expired", seconds: 1, now: renewed.Add(5 * time.Second), wantExpired: true},
		{name: "zero means 60", seconds: 0, now: renewed.Add(299 * time.Second), wantLeft: time.Second},
		{name: "negative means 60", seconds: -5, now: renewed.Add(301 * time.Second), wantExpired: true},
		{name: "renewal from a clock ahead of ours", seconds: 10, now: renewed.Add(-time.Second), wantLeft: 51 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expired, left := leaseCheck(renewed, tt.seconds, tt.now)
			if expired != tt.wantExpired || left != tt.wantLeft {
				t.Errorf("leaseCheck = (%v, %s), want (%v, %s)", expired, left, tt.wantExpired, tt.wantLeft)
			}
		})
	}
}

func TestLeaseStoppedCondition(t *testing.T) {
	got := leaseStoppedCondition(0, 2)
	if got.Type != clusterv1.ManagedClusterConditionAvailable || got.Status != metav1.ConditionUnknown ||
		got.Reason != clusterv1.ReasonManagedClusterLeaseUpdateStopped || got.ObservedGeneration != 2 {
		t.Errorf("got %+v", got)
	}
}

func TestDesiredTaints(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	earlier := metav1.NewTime(now.Add(-time.Hour))
	available := func(s metav1.ConditionStatus) *metav1.Condition {
		return &metav1.Condition{Type: clusterv1.ManagedClusterConditionAvailable, Status: s}
	}
	unreachable := func(at metav1.Time) clusterv1.Taint {
		return clusterv1.Taint{Key: clusterv1.ManagedClusterTaintUnreachable, Effect: clusterv1.TaintEffectNoSelect, TimeAdded: at}
	}
	unavailable := func(at metav1.Time) clusterv1.Taint {
		return clusterv1.Taint{Key: clusterv1.ManagedClusterTaintUnavailable, Effect: clusterv1.TaintEffectNoSelect, TimeAdded: at}
	}
	user := clusterv1.Taint{Key: "example.com/maintenance", Value: "yes", Effect: clusterv1.TaintEffectPreferNoSelect, TimeAdded: earlier}

	tests := []struct {
		name      string
		taints    []clusterv1.Taint
		available *metav1.Condition
		want      []clusterv1.Taint
	}{
		{name: "not reported yet: unreachable", available: nil, want: []clusterv1.Taint{unreachable(now)}},
		{name: "unknown: unreachable", available: available(metav1.ConditionUnknown), want: []clusterv1.Taint{unreachable(now)}},
		{name: "false: unavailable", available: available(metav1.ConditionFalse), want: []clusterv1.Taint{unavailable(now)}},
		{name: "true: none", available: available(metav1.ConditionTrue), want: nil},
		{name: "true removes both and keeps others",
			taints:    []clusterv1.Taint{unreachable(earlier), user, unavailable(earlier)},
			available: available(metav1.ConditionTrue), want: []clusterv1.Taint{user}},
		{name: "still unknown keeps timeAdded",
			taints:    []clusterv1.Taint{user, unreachable(earlier)},
			available: available(metav1.ConditionUnknown), want: []clusterv1.Taint{user, unreachable(earlier)}},
		{name: "unknown to false swaps the taint",
			taints:    []clusterv1.Taint{unreachable(earlier)},
			available: available(metav1.ConditionFalse), want: []clusterv1.Taint{unavailable(now)}},
		{name: "a tampered hub taint is put right",
			taints:    []clusterv1.Taint{{Key: clusterv1.ManagedClusterTaintUnreachable, Value: "x", Effect: clusterv1.TaintEffectPreferNoSelect, TimeAdded: earlier}},
			available: available(metav1.ConditionUnknown), want: []clusterv1.Taint{unreachable(now)}},
		{name: "a hub taint without timeAdded gets one",
			taints:    []clusterv1.Taint{{Key: clusterv1.ManagedClusterTaintUnavailable, Effect: clusterv1.TaintEffectNoSelect}},
			available: available(metav1.ConditionFalse), want: []clusterv1.Taint{unavailable(now)}},
		{name: "duplicates are dropped",
			taints:    []clusterv1.Taint{unreachable(earlier), unreachable(now)},
			available: nil, want: []clusterv1.Taint{unreachable(earlier)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]clusterv1.Taint(nil), tt.taints...)
			got := desiredTaints(tt.taints, tt.available, now)
			if !equality.Semantic.DeepEqual(got, tt.want) {
				t.Errorf("desiredTaints =\n  %+v\nwant\n  %+v", got, tt.want)
			}
			if !equality.Semantic.DeepEqual(in, tt.taints) {
				t.Errorf("desiredTaints changed its input")
			}
		})
	}
}

// TestTaintsEvent checks that a taints change is told in an event, except
// the first taints of a new cluster.
func TestTaintsEvent(t *testing.T) {
	for _, tc := range []struct {
		name    string
		created bool
		events  int
	}{
		{"a new cluster's first taints", true, 0},
		{"an existing cluster's taints change", false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &clusterScope{cluster: &clusterv1.ManagedCluster{}, now: metav1.Now(), created: tc.created}
			if _, err := (&ClusterReconciler{}).reconcileTaints(t.Context(), s); err != nil {
				t.Fatal(err)
			}
			if len(s.cluster.Spec.Taints) != 1 || s.cluster.Spec.Taints[0].Key != clusterv1.ManagedClusterTaintUnreachable {
				t.Errorf("taints %+v, want the unreachable taint", s.cluster.Spec.Taints)
			}
			if len(s.events) != tc.events {
				t.Errorf("%d events, want %d", len(s.events), tc.events)
			}
		})
	}
}
