package registration

import (
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
)

// What follows is exported for simulators that stand in for many agents
// without managed clusters (test/bench's hollow agents), so that what
// they write to the hub has the shape this package writes.

// NewCSR returns a new private key and the CSR the agent creates with it
// for cluster c as agent id.
func NewCSR(c, id string, expiration time.Duration) (keyPEM []byte, csr *certificatesv1.CertificateSigningRequest, err error) {
	return newCSR(c, id, expiration)
}

// NewManagedCluster is the ManagedCluster the agent creates when it
// joins: of the cluster clusterID, whose API server is client, as agent id.
func NewManagedCluster(name, clusterID, id string, client clusterv1.ClientConfig, leaseDurationSeconds int32) *clusterv1.ManagedCluster {
	return newManagedCluster(name, self{clusterID: clusterID, client: client, agentID: id}, leaseDurationSeconds)
}

// SetHealthyStatus sets mc's status as the status controller does for a
// healthy cluster clusterID of Kubernetes gitVersion with nodes, with no
// ClusterClaims or properties of its own.
func SetHealthyStatus(mc *clusterv1.ManagedCluster, clusterID, gitVersion string, nodes []corev1.Node) {
	meta.SetStatusCondition(&mc.Status.Conditions, joinedCondition())
	meta.SetStatusCondition(&mc.Status.Conditions, availableCondition(nil))
	mc.Status.Version.Kubernetes = gitVersion
	mc.Status.Capacity, mc.Status.Allocatable = resourceTotals(nodes)
	mc.Status.ClusterClaims = clusterClaims(reservedClaims(clusterID, gitVersion, nodes), nil, nil, MaxCustomClusterClaims)
}

// AcceptedPollBackoff returns the waits between the agent's checks of
// whether the hub accepted its cluster, once it holds a certificate.
func AcceptedPollBackoff() *wait.Backoff { return newBackoff(acceptedPollLimit) }
