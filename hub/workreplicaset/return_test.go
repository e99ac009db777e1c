package workreplicaset

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
)

// TestReturnWait checks how long a cluster back from an outage keeps a
// work its Placement has not chosen again yet.
func TestReturnWait(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	cluster := func(status metav1.ConditionStatus, since time.Time) *clusterv1.ManagedCluster {
		return &clusterv1.ManagedCluster{Status: clusterv1.ManagedClusterStatus{Conditions: []metav1.Condition{{
			Type: clusterv1.ManagedClusterConditionAvailable, Status: status, LastTransitionTime: metav1.NewTime(since),
		}}}}
	}
	for _, tc := range []struct {
		name        string
		mc          *clusterv1.ManagedCluster
		unreachable time.Time
		decided     time.Time
		want        time.Duration
	}{
		{"back 2 s ago, decided before", cluster(metav1.ConditionTrue, now.Add(-2*time.Second)), time.Time{}, now.Add(-time.Minute), returnGrace - 2*time.Second},
		{"back 2 s ago, decided in the same second", cluster(metav1.ConditionTrue, now.Add(-2*time.Second)), time.Time{}, now.Add(-2 * time.Second), returnGrace - 2*time.Second},
		{"back 2 s ago, decided since", cluster(metav1.ConditionTrue, now.Add(-2*time.Second)), time.Time{}, now.Add(-time.Second), 0},
		{"back longer than the grace ago", cluster(metav1.ConditionTrue, now.Add(-returnGrace-time.Second)), time.Time{}, now.Add(-time.Hour), -time.Second},
		{"still unreachable: failover decides", cluster(metav1.ConditionUnknown, now.Add(-time.Minute)), now.Add(-time.Minute), now.Add(-time.Hour), 0},
		{"not available", cluster(metav1.ConditionFalse, now.Add(-time.Second)), time.Time{}, now.Add(-time.Hour), 0},
		{"no condition", &clusterv1.ManagedCluster{}, time.Time{}, now.Add(-time.Hour), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := returnWait(tc.mc, tc.unreachable, tc.decided, now); got != tc.want {
				t.Errorf("returnWait = %s, want %s", got, tc.want)
			}
		})
	}
}
