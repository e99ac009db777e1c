package addon

import "testing"

func TestParseAgentUser(t *testing.T) {
	for _, tc := range []struct {
		user        string
		c, a, agent string
		ok          bool
	}{
		{AgentUser("c1", "hello", "hello-agent"), "c1", "hello", "hello-agent", true},
		{"system:open-cluster-management:c1:agent1", "", "", "", false},
		{"system:open-cluster-management:cluster:c1:addon:hello", "", "", "", false},
		{"system:open-cluster-management:cluster:c1:addon:hello:agent:x:y", "", "", "", false},
		{"system:open-cluster-management:cluster::addon:hello:agent:x", "", "", "", false},
		{"system:open-cluster-management:cluster:c1:other:hello:agent:x", "", "", "", false},
	} {
		c, a, agent, ok := ParseAgentUser(tc.user)
		if c != tc.c || a != tc.a || agent != tc.agent || ok != tc.ok {
			t.Errorf("ParseAgentUser(%q) = %q, %q, %q, %t", tc.user, c, a, agent, ok)
		}
	}
	if c, a, ok := ParseClusterAddOnGroup(ClusterAddOnGroup("c1", "hello")); !ok || c != "c1" || a != "hello" {
		t.Errorf("ParseClusterAddOnGroup = %q, %q, %t", c, a, ok)
	}
	if _, _, ok := ParseClusterAddOnGroup(AgentUser("c1", "hello", "x")); ok {
		t.Error("a user parsed as a group")
	}
	if a, ok := ParseAddOnGroup(AddOnGroup("hello")); !ok || a != "hello" {
		t.Errorf("ParseAddOnGroup = %q, %t", a, ok)
	}
	if g := AgentGroups("c1", "hello"); g[1] != AddOnGroup("hello") {
		t.Errorf("AgentGroups[1] = %q, want AddOnGroup", g[1])
	}
}
