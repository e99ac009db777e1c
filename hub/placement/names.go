package placement

// recorderName is the reporting controller of the events this package emits.
const recorderName = "flotilla-hub-placement"

// Field indexes this package registers with the manager's cache.
const (
	// bindingSetIndex indexes ManagedClusterSetBindings by spec.clusterSet.
	bindingSetIndex = "placement.flotilla.io/binding.spec.clusterSet"
	// scoreNameIndex indexes Placements by the AddOnPlacementScore names
	// they read; scoresAny stands for any name (a CEL expression calls scores()).
	scoreNameIndex = "placement.flotilla.io/addOnPlacementScores"
	scoresAny      = "*"
)

// Event reasons.
const (
	reasonDecisionUpdate = "DecisionUpdate"
	reasonMisconfigured  = "PlacementMisconfigured"
)

// maxConcurrentReconciles bounds how many placements are scheduled at once.
const maxConcurrentReconciles = 2
