package v1

// Labels.
const (
	// ClusterNameLabel carries the cluster name on the cluster's hub namespace
	// and on the CSRs its agent creates.
	ClusterNameLabel = "open-cluster-management.io/cluster-name"
	// ClusterSetLabel on a ManagedCluster names the ManagedClusterSet it belongs
	// to, for sets that use the ExclusiveClusterSetLabel selector.
	ClusterSetLabel = "cluster.open-cluster-management.io/clusterset"
)

// Condition types of a ManagedCluster.
const (
	// ManagedClusterConditionHubAccepted is True once a hub admin has accepted the cluster.
	ManagedClusterConditionHubAccepted = "HubAcceptedManagedCluster"
	// ManagedClusterConditionHubDenied is True when a hub admin has denied the cluster.
	ManagedClusterConditionHubDenied = "HubDeniedManagedCluster"
	// ManagedClusterConditionJoined is True once the agent holds a hub credential.
	ManagedClusterConditionJoined = "ManagedClusterJoined"
	// ManagedClusterConditionAvailable reports whether the cluster is healthy and
	// its agent keeps renewing its lease.
	ManagedClusterConditionAvailable = "ManagedClusterConditionAvailable"
	// ManagedClusterConditionClockSynced reports whether the clocks of hub and
	// cluster agree closely enough for leases to work.
	ManagedClusterConditionClockSynced = "ManagedClusterConditionClockSynced"
)

// Condition reasons of a ManagedCluster.
const (
	// ReasonHubClusterAdminAccepted means spec.hubAcceptsClient is true.
	ReasonHubClusterAdminAccepted = "HubClusterAdminAccepted"
	// ReasonHubClusterAdminDenied means spec.hubAcceptsClient was set back to false.
	ReasonHubClusterAdminDenied = "HubClusterAdminDenied"
	// ReasonManagedClusterJoined means the agent stored its hub kubeconfig.
	ReasonManagedClusterJoined = "ManagedClusterJoined"
	// ReasonManagedClusterAvailable means the cluster's API server reports healthy.
	ReasonManagedClusterAvailable = "ManagedClusterAvailable"
	// ReasonManagedClusterKubeAPIServerUnavailable means the cluster's API server
	// reports unhealthy.
	ReasonManagedClusterKubeAPIServerUnavailable = "ManagedClusterKubeAPIServerUnavailable"
	// ReasonManagedClusterLeaseUpdateStopped means the agent stopped renewing its lease.
	ReasonManagedClusterLeaseUpdateStopped = "ManagedClusterLeaseUpdateStopped"
)

// Taint keys the hub owns.
const (
	// ManagedClusterTaintUnreachable is set while Available is Unknown.
	ManagedClusterTaintUnreachable = "cluster.open-cluster-management.io/unreachable"
	// ManagedClusterTaintUnavailable is set while Available is False.
	ManagedClusterTaintUnavailable = "cluster.open-cluster-management.io/unavailable"
)

// Lease of a managed cluster.
const (
	// ManagedClusterLeaseName is the Lease, in the cluster's hub namespace, that
	// its agent renews.
	ManagedClusterLeaseName = "managed-cluster-lease"
	// DefaultLeaseDurationSeconds is the lease period when
	// spec.leaseDurationSeconds is unset.
	DefaultLeaseDurationSeconds = 60
)

// Resource names reported in status.capacity and status.allocatable.
const (
	// ResourceCPU is the number of CPUs.
	ResourceCPU ResourceName = "cpu"
	// ResourceMemory is memory in bytes.
	ResourceMemory ResourceName = "memory"
	// ResourcePods is the number of pods.
	ResourcePods ResourceName = "pods"
)

// Names of the ClusterClaims that the agent itself maintains.
const (
	// ClusterClaimID is a unique identifier of the cluster.
	ClusterClaimID = "id.k8s.io"
	// ClusterClaimKubeVersion is the Kubernetes version of the cluster.
	ClusterClaimKubeVersion = "kubeversion.open-cluster-management.io"
	// ClusterClaimPlatform is the infrastructure platform of the cluster.
	ClusterClaimPlatform = "platform.open-cluster-management.io"
	// ClusterClaimProduct is the Kubernetes distribution of the cluster.
	ClusterClaimProduct = "product.open-cluster-management.io"
)

// ReservedClusterClaimNames are the ClusterClaim names that the agent maintains.
var ReservedClusterClaimNames = [...]string{
	ClusterClaimID,
	ClusterClaimKubeVersion,
	ClusterClaimPlatform,
	ClusterClaimProduct,
}
