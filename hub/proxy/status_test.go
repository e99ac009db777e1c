package proxy

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
			c := tunnelCondition(tc.accepted, tun, tc.open, 3)
			if c.Type != ConditionTunnelConnected || c.Status != tc.status || c.Reason != tc.reason || c.ObservedGeneration != 3 || c.Message == "" {
				t.Errorf("got %+v, want status %s reason %s", c, tc.status, tc.reason)
			}
		})
	}
}
