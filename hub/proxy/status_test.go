package proxy

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
)

var (
	available    = &metav1.Condition{Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionTrue, Reason: clusterv1.ReasonManagedClusterAvailable}
	leaseExpired = &metav1.Condition{Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionUnknown, Reason: clusterv1.ReasonManagedClusterLeaseUpdateStopped}
)

func TestTunnelCondition(t *testing.T) {
	tun := &Tunnel{Cluster: "c1", AgentID: "a1"}
	for _, tc := range []struct {
		name           string
		accepted, open bool
		status         metav1.ConditionStatus
		reason         string
	}{
		{"connected", true, true, metav1.ConditionTrue, ReasonAgentConnected},
		{"not connected", true, false, metav1.ConditionFalse, ReasonAgentNotConnected},
		{"denied", false, false, metav1.ConditionFalse, ReasonHubClusterAdminDenied},
		{"denied while open", false, true, metav1.ConditionFalse, ReasonHubClusterAdminDenied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tunnelCondition(tc.accepted, available, tun, tc.open)
			if c.Type != ConditionTunnelConnected || c.Status != tc.status || c.Reason != tc.reason || c.ObservedGeneration != 0 || c.Message == "" {
				t.Errorf("got %+v, want status %s reason %s", c, tc.status, tc.reason)
			}
		})
	}
}

func TestTunnelConditionUpdate(t *testing.T) {
	tun := &Tunnel{Cluster: "c1", AgentID: "a1"}
	connected := tunnelCondition(true, available, tun, true)
	for _, tc := range []struct {
		name      string
		current   *metav1.Condition
		accepted  bool
		available *metav1.Condition
		open      bool
		write     bool
		reason    string
	}{
		{"never accepted: nothing to say", nil, false, nil, false, false, ReasonHubClusterAdminDenied},
		{"accepted, agent not reported yet: nothing to say", nil, true, nil, false, false, ReasonAgentNotConnected},
		{"accepted, tunnel open before the agent reported", nil, true, nil, true, true, ReasonAgentConnected},
		{"agent reported, no tunnel", nil, true, available, false, true, ReasonAgentNotConnected},
		{"tunnel opened", ptr.To(tunnelCondition(true, available, tun, false)), true, available, true, true, ReasonAgentConnected},
		{"unchanged", ptr.To(connected), true, available, true, false, ReasonAgentConnected},
		{"tunnel closed", ptr.To(connected), true, available, false, true, ReasonAgentNotConnected},
		{"denied after it was accepted", ptr.To(connected), false, available, true, true, ReasonHubClusterAdminDenied},
		{"agent stopped renewing its lease, tunnel still open", ptr.To(connected), true, leaseExpired, true, true, ReasonAgentLeaseUpdateStopped},
		{"lease stopped, and no tunnel", ptr.To(connected), true, leaseExpired, false, true, ReasonAgentNotConnected},
		{"agent back", ptr.To(tunnelCondition(true, leaseExpired, tun, true)), true, available, true, true, ReasonAgentConnected},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, write := tunnelConditionUpdate(tc.current, tc.accepted, tc.available, tun, tc.open)
			if write != tc.write || c.Reason != tc.reason {
				t.Errorf("got %s, write %v; want %s, write %v", c.Reason, write, tc.reason, tc.write)
			}
		})
	}
}
