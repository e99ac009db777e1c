package registration

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
)

func TestHeldByAnother(t *testing.T) {
	me := self{clusterID: "uid-me", agentID: "a1", client: clusterv1.ClientConfig{URL: "https://10.96.0.1:443", CABundle: []byte("my CA")}}
	mine := newManagedCluster("edge-1", me, 0)
	withClaim := func(mc *clusterv1.ManagedCluster, id string) *clusterv1.ManagedCluster {
		mc = mc.DeepCopy()
		mc.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{{Name: clusterv1.ClusterClaimID, Value: id}}
		return mc
	}
	withClient := func(mc *clusterv1.ManagedCluster, url, ca string) *clusterv1.ManagedCluster {
		mc = mc.DeepCopy()
		mc.Spec.ManagedClusterClientConfigs = []clusterv1.ClientConfig{{URL: url, CABundle: []byte(ca)}}
		return mc
	}
	heldBy := func(mc *clusterv1.ManagedCluster, agent string, joined, available metav1.ConditionStatus) *clusterv1.ManagedCluster {
		mc = mc.DeepCopy()
		mc.Annotations = map[string]string{AgentIDAnnotation: agent}
		mc.Status.Conditions = []metav1.Condition{
			{Type: clusterv1.ManagedClusterConditionJoined, Status: joined},
			{Type: clusterv1.ManagedClusterConditionAvailable, Status: available},
		}
		return mc
	}
	for _, tc := range []struct {
		name string
		mc   *clusterv1.ManagedCluster
		want string
	}{
		{name: "the one this agent created", mc: mine},
		{name: "created by an admin, without client configs", mc: &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "edge-1"}}},
		{name: "another cluster's id", mc: withClaim(mine, "uid-other"), want: "belongs to another cluster: it reports id.k8s.io uid-other, this cluster is uid-me"},
		{name: "another API server", mc: withClient(mine, "https://other:6443", "my CA"), want: "it reports API server https://other:6443, this cluster is https://10.96.0.1:443"},
		{name: "the same in-cluster address with another CA", mc: withClient(mine, "https://10.96.0.1:443", "other CA"), want: "belongs to another cluster"},
		{name: "this cluster's id decides over its address", mc: withClaim(withClient(mine, "https://old:6443", "old CA"), "uid-me")},
		{name: "joined by another agent that is still available", mc: heldBy(mine, "a2", metav1.ConditionTrue, metav1.ConditionTrue), want: "held by agent a2, which is still available"},
		{name: "joined by another agent that stopped", mc: heldBy(mine, "a2", metav1.ConditionTrue, metav1.ConditionUnknown)},
		{name: "joined by this agent", mc: heldBy(mine, "a1", metav1.ConditionTrue, metav1.ConditionTrue)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got := heldByAnother(tc.mc, me)
			if tc.want == "" {
				g.Expect(got).To(BeEmpty())
			} else {
				g.Expect(got).To(ContainSubstring(tc.want))
			}
		})
	}
}

func TestNewManagedClusterWaitsForTheHubToAccept(t *testing.T) {
	g := NewWithT(t)
	me := self{agentID: "a1", client: clusterv1.ClientConfig{URL: "https://spoke:6443", CABundle: []byte("ca")}}
	mc := newManagedCluster("edge-1", me, 0)
	g.Expect(mc.Name).To(Equal("edge-1"))
	g.Expect(mc.Spec.HubAcceptsClient).To(BeFalse())
	g.Expect(mc.Spec.ManagedClusterClientConfigs).To(Equal([]clusterv1.ClientConfig{me.client}))
	g.Expect(mc.Annotations).To(HaveKeyWithValue(AgentIDAnnotation, "a1"))
}
