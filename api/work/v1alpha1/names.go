package v1alpha1

// Condition types of a ManifestWorkReplicaSet.
const (
	// ManifestWorkReplicaSetConditionPlacementVerified says whether the Placements and their decisions were found.
	// Reasons: AsExpected, PlacementDecisionNotFound, PlacementDecisionEmpty, NotAsExpected.
	ManifestWorkReplicaSetConditionPlacementVerified = "PlacementVerified"
	// ManifestWorkReplicaSetConditionPlacementRolledOut says whether the rollout finished.
	// Reasons: Progressing, Complete.
	ManifestWorkReplicaSetConditionPlacementRolledOut = "PlacementRolledOut"
	// ManifestWorkReplicaSetConditionManifestworkApplied says whether a ManifestWork exists for every chosen cluster.
	// Reasons: AsExpected, NotAsExpected, Processing.
	ManifestWorkReplicaSetConditionManifestworkApplied = "ManifestworkApplied"
)

// Reasons of the conditions of a ManifestWorkReplicaSet.
const (
	// ReasonPlacementDecisionNotFound means a referenced Placement or its decisions do not exist.
	ReasonPlacementDecisionNotFound = "PlacementDecisionNotFound"
	// ReasonPlacementDecisionEmpty means the Placements chose no cluster.
	ReasonPlacementDecisionEmpty = "PlacementDecisionEmpty"
	// ReasonAsExpected means all is as desired.
	ReasonAsExpected = "AsExpected"
	// ReasonNotAsExpected means something is not as desired; the message says what.
	ReasonNotAsExpected = "NotAsExpected"
	// ReasonProcessing means the ManifestWorks are still being created or updated.
	ReasonProcessing = "Processing"
	// ReasonProgressing means the rollout is under way.
	ReasonProgressing = "Progressing"
	// ReasonComplete means the rollout reached every chosen cluster.
	ReasonComplete = "Complete"
)

// Cascade deletion policies.
const (
	// Background deletes the replica set without waiting for its ManifestWorks (the default).
	Background CascadeDeletionPolicy = "Background"
	// Foreground keeps the replica set until its ManifestWorks are gone.
	Foreground CascadeDeletionPolicy = "Foreground"
)

// Rollout types.
const (
	// All rolls out to every chosen cluster at once.
	All RolloutType = "All"
	// Progressive rolls out to maxConcurrency clusters at a time.
	Progressive RolloutType = "Progressive"
	// ProgressivePerGroup rolls out one decision group at a time.
	ProgressivePerGroup RolloutType = "ProgressivePerGroup"
)

// ProgressDeadlineNone is the progressDeadline that waits forever.
const ProgressDeadlineNone = "None"

// ManifestWorkReplicaSetFinalizer holds a ManifestWorkReplicaSet until its ManifestWorks are deleted.
const ManifestWorkReplicaSetFinalizer = "work.open-cluster-management.io/manifest-work-cleanup"

// RolloutTimeAnnotation on a ManifestWork of a replica set records when the
// hub last wrote its spec: progressDeadline and minSuccessTime count from
// it (a Flotilla annotation; OCM keeps this in memory).
const RolloutTimeAnnotation = "work.flotilla.io/rollout-time"

// PausedAnnotation set to "true" on a ManifestWorkReplicaSet pauses its
// rollout: the hub writes no new spec to any ManifestWork until it is
// removed, and PlacementRolledOut says the rollout is paused (a Flotilla
// annotation; OCM has no pause). Works already written stay as they are.
const PausedAnnotation = "work.flotilla.io/paused"
