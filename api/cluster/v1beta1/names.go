package v1beta1

// Labels on PlacementDecisions.
const (
	// PlacementLabel names the Placement that a PlacementDecision belongs to.
	PlacementLabel = "cluster.open-cluster-management.io/placement"
	// DecisionGroupIndexLabel is the index of the decision group of a PlacementDecision.
	DecisionGroupIndexLabel = "cluster.open-cluster-management.io/decision-group-index"
	// DecisionGroupNameLabel is the name of the decision group of a PlacementDecision.
	DecisionGroupNameLabel = "cluster.open-cluster-management.io/decision-group-name"
)

// MaxDecisionsPerPlacementDecision is the most decisions one PlacementDecision
// holds; PlacementDecisions are named <placement>-decision-<n>, from 1.
const MaxDecisionsPerPlacementDecision = 100

// Condition types of a Placement.
const (
	// PlacementConditionSatisfied is True when every requested decision is scheduled.
	PlacementConditionSatisfied = "PlacementSatisfied"
	// PlacementConditionMisconfigured is True when the spec cannot be evaluated,
	// e.g. it names an unknown prioritizer.
	PlacementConditionMisconfigured = "PlacementMisconfigured"
)

// Condition reasons of a Placement.
const (
	// ReasonAllDecisionsScheduled means every requested decision is scheduled.
	ReasonAllDecisionsScheduled = "AllDecisionsScheduled"
	// ReasonNotAllDecisionsScheduled means fewer clusters qualify than requested.
	ReasonNotAllDecisionsScheduled = "NotAllDecisionsScheduled"
	// ReasonNoManagedClusterSetBindings means no set is bound to the namespace.
	ReasonNoManagedClusterSetBindings = "NoManagedClusterSetBindings"
	// ReasonNoIntersection means none of spec.clusterSets is bound to the namespace.
	ReasonNoIntersection = "NoIntersection"
	// ReasonAllManagedClusterSetsEmpty means the eligible sets have no members.
	ReasonAllManagedClusterSetsEmpty = "AllManagedClusterSetsEmpty"
	// ReasonNoManagedClusterMatched means no cluster matches any predicate.
	ReasonNoManagedClusterMatched = "NoManagedClusterMatched"
	// ReasonMisconfigured means the spec cannot be evaluated.
	ReasonMisconfigured = "Misconfigured"
	// ReasonSucceedconfigured means the spec is valid; the spelling is OCM's.
	ReasonSucceedconfigured = "Succeedconfigured"
)

// Score coordinate types.
const (
	// ScoreCoordinateTypeBuiltIn uses a built-in prioritizer.
	ScoreCoordinateTypeBuiltIn = "BuiltIn"
	// ScoreCoordinateTypeAddOn uses a score from AddOnPlacementScores.
	ScoreCoordinateTypeAddOn = "AddOn"
)

// Names of the built-in prioritizers.
const (
	// PrioritizerBalance balances decisions among clusters.
	PrioritizerBalance = "Balance"
	// PrioritizerSteady keeps existing decisions.
	PrioritizerSteady = "Steady"
	// PrioritizerResourceAllocatableCPU prefers clusters with more allocatable CPU.
	PrioritizerResourceAllocatableCPU = "ResourceAllocatableCPU"
	// PrioritizerResourceAllocatableMemory prefers clusters with more allocatable memory.
	PrioritizerResourceAllocatableMemory = "ResourceAllocatableMemory"
	// PrioritizerSpread spreads decisions evenly over topologies.
	PrioritizerSpread = "Spread"
)

// FailoverGraceAnnotation on a Placement bounds how long what it placed on
// a cluster stays there after the cluster left its decisions because the
// hub tainted it unreachable or unavailable, when no replacement takes over
// (a Go duration such as "10m"; default 5m, "0s" turns the grace off). A
// Flotilla annotation, read by the ManifestWorkReplicaSet controller and
// the policy propagator: OCM deletes at once.
const FailoverGraceAnnotation = "cluster.flotilla.io/failover-grace"
