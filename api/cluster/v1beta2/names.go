package v1beta2

import clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"

// ClusterSetLabel on a ManagedCluster names its set under the
// ExclusiveClusterSetLabel selector.
const ClusterSetLabel = clusterv1.ClusterSetLabel

// Sets that the hub maintains.
const (
	// DefaultManagedClusterSetName is the set that clusters without a set label join.
	DefaultManagedClusterSetName = "default"
	// GlobalManagedClusterSetName is the set that holds every cluster.
	GlobalManagedClusterSetName = "global"
)

// Condition types.
const (
	// ManagedClusterSetConditionEmpty is True while a set has no member clusters.
	ManagedClusterSetConditionEmpty = "ClusterSetEmpty"
	// ClusterSetBindingBoundType is True while a binding's ManagedClusterSet exists.
	ClusterSetBindingBoundType = "Bound"
)

// Condition reasons.
const (
	// ReasonClustersSelected means a set has at least one member cluster.
	ReasonClustersSelected = "ClustersSelected"
	// ReasonNoClusterMatched means a set has no member clusters.
	ReasonNoClusterMatched = "NoClusterMatched"
	// ReasonClusterSetBound means a binding's set exists.
	ReasonClusterSetBound = "ClusterSetBound"
	// ReasonClusterSetNotFound means a binding's set does not exist.
	ReasonClusterSetNotFound = "ClusterSetNotFound"
)
