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

// RevisionAnnotation on a ManifestWork of a replica set is the name of the
// ControllerRevision of the replica set's revision it was rendered from
// (see revision_types.go): a name, not the number, because an undo
// renumbers a revision and the works that carry it stay as they are.
const RevisionAnnotation = "work.flotilla.io/revision"

// ChangedByAnnotation on a ManifestWorkReplicaSet is the user whose request
// last changed what shapes its works (template, overrides, replica
// division), as the hub's admission recorded it: a value a client sends is
// replaced. The revision made of that change keeps it.
const ChangedByAnnotation = "work.flotilla.io/changed-by"

// Annotations of a revision's ControllerRevision.
const (
	// RevisionAuthorAnnotation is who made the change (ChangedByAnnotation
	// of the replica set when the hub recorded the revision).
	RevisionAuthorAnnotation = "work.flotilla.io/author"
	// RevisionSummaryAnnotation is a one-line summary of what changed from
	// the revision before, e.g. "Deployment default/web: image nginx:1.27 → nginx:1.28".
	RevisionSummaryAnnotation = "work.flotilla.io/change-summary"
	// RevisionCompleteAnnotation is when (RFC 3339) the revision had been
	// rolled out to every chosen cluster and was Available on each: a
	// revision an automatic rollback may go back to.
	RevisionCompleteAnnotation = "work.flotilla.io/complete"
	// RevisionFailedAnnotation says why the revision was rolled back: the
	// clusters whose gate it failed and their messages. The hub renders the
	// last complete revision while the current one carries it; a change of
	// the spec (a new revision) starts a new rollout.
	RevisionFailedAnnotation = "work.flotilla.io/failed"
)

// ManifestWorkReplicaSetConditionRolledBack (a Flotilla condition) is
// present while the current revision failed and was, or is being, rolled
// back: False with reason RollingBack while clusters are moved back, True
// with RolledBack once every cluster that took it is back, False with
// RollbackFailed or NoCompleteRevision when the rollback stopped. While it
// is present, PlacementRolledOut is False with the same reason, never
// Complete: the spec as written is not rolled out.
const ManifestWorkReplicaSetConditionRolledBack = "RolledBack"

// Reasons of condition RolledBack.
const (
	// ReasonRollingBack means the clusters that took the failed revision are being moved back.
	ReasonRollingBack = "RollingBack"
	// ReasonRolledBack means every cluster that took the failed revision is back on the last complete one.
	ReasonRolledBack = "RolledBack"
	// ReasonRollbackFailed means a cluster failed on the revision rolled back to: the rollback stopped.
	ReasonRollbackFailed = "RollbackFailed"
	// ReasonNoCompleteRevision means the failed revision has no complete revision before it: nothing was rolled back.
	ReasonNoCompleteRevision = "NoCompleteRevision"
)
