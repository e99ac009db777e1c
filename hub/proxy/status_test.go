package proxy

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
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
			c := tunnelCondition(tc.accepted, tun, tc.open)
			if c.Type != ConditionTunnelConnected || c.Status != tc.status || c.Reason != tc.reason || c.ObservedGeneration != 0 || c.Message == "" {
				t.Errorf("got %+v, want status %s reason %s", c, tc.status, tc.reason)
			}
		})
	}
}

func TestTunnelConditionUpdate(t *testing.T) {
	tun := &Tunnel{Cluster: "c1", AgentID: "a1"}
	connected := tunnelCondition(true, tun, true)
	for _, tc := range []struct {
		name                     string
		current                  *metav1.Condition
		accepted, reported, open bool
		write                    bool
		reason                   string
	}{
		{"never accepted: nothing to say", nil, false, false, false, false, ReasonHubClusterAdminDenied},
		{"accepted, agent not reported yet: nothing to say", nil, true, false, false, false, ReasonAgentNotConnected},
		{"accepted, tunnel open before the agent reported", nil, true, false, true, true, ReasonAgentConnected},
		{"agent reported, no tunnel", nil, true, true, false, true, ReasonAgentNotConnected},
		{"tunnel opened", ptr.To(tunnelCondition(true, tun, false)), true, true, true, true, ReasonAgentConnected},
		{"unchanged", ptr.To(connected), true, true, true, false, ReasonAgentConnected},
		{"tunnel closed", ptr.To(connected), true, true, false, true, ReasonAgentNotConnected},
		{"denied after it was accepted", ptr.To(connected), false, true, true, true, ReasonHubClusterAdminDenied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, write := tunnelConditionUpdate(tc.current, tc.accepted, tc.reported, tun, tc.open)
			if write != tc.write || c.Reason != tc.reason {
				t.Errorf("got %s, write %v; want %s, write %v", c.Reason, write, tc.reason, tc.write)
			}
		})
	}
}
