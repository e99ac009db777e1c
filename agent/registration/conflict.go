package registration

import (
	"bytes"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/internal/identity"
)

// AgentIDAnnotation on a ManagedCluster names the agent that joined it
// last. It has the prefix of the only annotations an agent may change.
const AgentIDAnnotation = identity.AgentIDAnnotation

// self is how an agent recognises its cluster's ManagedCluster.
type self struct {
	// clusterID is the value of the id.k8s.io claim: kube-system's UID.
	clusterID string
	// client is what the agent reports in spec.managedClusterClientConfigs.
	client clusterv1.ClientConfig
	// agentID names this agent.
	agentID string
}

// heldByAnother says why mc belongs to another cluster or another live
// agent, or "" when this agent may join it. The id.k8s.io claim decides when
// the ManagedCluster reports one: it names the cluster, while API server
// URLs (an in-cluster address, say) may be the same on many clusters.
func heldByAnother(mc *clusterv1.ManagedCluster, me self) string {
	if id := claim(mc.Status.ClusterClaims, clusterv1.ClusterClaimID); id != "" {
		if id != me.clusterID {
			return fmt.Sprintf("ManagedCluster %s belongs to another cluster: it reports %s %s, this cluster is %s",
				mc.Name, clusterv1.ClusterClaimID, id, me.clusterID)
		}
	} else if cfgs := mc.Spec.ManagedClusterClientConfigs; len(cfgs) > 0 && !reports(cfgs, me.client) {
		return fmt.Sprintf("ManagedCluster %s belongs to another cluster: it reports API server %s, this cluster is %s",
			mc.Name, cfgs[0].URL, me.client.URL)
	}
	other := mc.Annotations[AgentIDAnnotation]
	if other != "" && other != me.agentID &&
		meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionJoined) &&
		meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable) {
		return fmt.Sprintf("ManagedCluster %s is held by agent %s, which is still available: stop that agent, or wait until the hub marks the cluster unavailable",
			mc.Name, other)
	}
	return ""
}

// reports says whether cfgs lists want: the same URL, and the same CA
// where both name one.
func reports(cfgs []clusterv1.ClientConfig, want clusterv1.ClientConfig) bool {
	for _, c := range cfgs {
		if c.URL == want.URL && (len(c.CABundle) == 0 || len(want.CABundle) == 0 || bytes.Equal(c.CABundle, want.CABundle)) {
			return true
		}
	}
	return false
}

func claim(claims []clusterv1.ManagedClusterClaim, name string) string {
	for _, c := range claims {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// newManagedCluster is the ManagedCluster an agent creates for its cluster.
func newManagedCluster(name string, me self, leaseDurationSeconds int32) *clusterv1.ManagedCluster {
	return &clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{AgentIDAnnotation: me.agentID},
		},
		Spec: clusterv1.ManagedClusterSpec{
			ManagedClusterClientConfigs: []clusterv1.ClientConfig{me.client},
			HubAcceptsClient:            false,
			LeaseDurationSeconds:        leaseDurationSeconds,
		},
	}
}
