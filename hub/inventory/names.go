package inventory

// ClusterManagerName is Flotilla's name as a cluster manager: in each
// ClusterProfile's spec.clusterManager.name and x-k8s.io/cluster-manager
// label, and as the neutral PlacementDecisions' schedulerName.
const ClusterManagerName = "flotilla"

// AccessProviderName names the access provider of every ClusterProfile,
// and so the credential plugin a consumer runs for it.
const AccessProviderName = "flotilla"

// ClusterNameLabel, on a ClusterProfile, names its ManagedCluster (as on
// the cluster's hub namespace).
const ClusterNameLabel = "open-cluster-management.io/cluster-name"

// Condition reasons of ClusterProfiles that the cluster's own conditions
// do not give.
const (
	// reasonNotReported: the cluster has no such condition yet.
	reasonNotReported = "NotReported"
)

// bindingSetIndex indexes ManagedClusterSetBindings by spec.clusterSet.
const bindingSetIndex = "inventory.flotilla.io/spec.clusterSet"

// placementOwnerIndex indexes OCM PlacementDecisions by their placement label.
const placementLabelIndex = "inventory.flotilla.io/placement-label"
