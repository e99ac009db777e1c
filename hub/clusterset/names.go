package clusterset

// Admission objects installed by Install.
const (
	// JoinPolicyName names the ValidatingAdmissionPolicy, and its binding,
	// that guards the clusterset label of ManagedClusters.
	JoinPolicyName = "flotilla-managedclusterset-join"
	// BindPolicyName names the ValidatingAdmissionPolicy, and its binding,
	// that guards ManagedClusterSetBindings.
	BindPolicyName = "flotilla-managedclusterset-bind"
)

// The virtual subresources that set membership and binding authorize against.
const (
	// SetsResource is the resource of the virtual subresources below.
	SetsResource = "managedclustersets"
	// JoinSubresource: create on it, for a set's name, lets a user put a
	// cluster into that set (or take it out).
	JoinSubresource = "join"
	// BindSubresource: create on it, for a set's name, lets a user bind the
	// set to a namespace.
	BindSubresource = "bind"
)

// recorderName is the reporting controller of the events this package emits.
const recorderName = "flotilla-hub-clusterset"

// bindingSetIndex indexes ManagedClusterSetBindings by spec.clusterSet.
const bindingSetIndex = "clusterset.flotilla.io/spec.clusterSet"

// Condition reasons and event reasons of this package.
const (
	// reasonClusterSetNameMismatch: the binding's name differs from spec.clusterSet.
	reasonClusterSetNameMismatch = "ClusterSetNameMismatch"
	reasonSetRestored            = "ManagedClusterSetRestored"
	reasonInvalidSelector        = "InvalidClusterSelector"
)
