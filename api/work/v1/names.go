package v1

// Condition types of a ManifestWork (status.conditions).
const (
	// WorkApplied is true when every manifest of the work was applied.
	WorkApplied = "Applied"
	// WorkAvailable is true when every applied object exists on the managed cluster.
	WorkAvailable = "Available"
	// WorkDegraded is true when the workload has not matched its desired state for a while.
	WorkDegraded = "Degraded"
	// WorkProgressing is true while the agent is still applying the work.
	WorkProgressing = "Progressing"
	// WorkComplete is true when every completable manifest is Complete; the work is no longer updated.
	WorkComplete = "Complete"
	// WorkDeleting is true while the agent removes a work that is being deleted.
	WorkDeleting = "Deleting"
)

// Condition types of one manifest (status.resourceStatus.manifests[].conditions).
const (
	// ManifestApplied is true when the manifest was applied.
	ManifestApplied = "Applied"
	// ManifestAvailable is true when the applied object exists.
	ManifestAvailable = "Available"
	// ManifestDegraded is true when the object has not matched its desired state for a while.
	ManifestDegraded = "Degraded"
	// ManifestProgressing is true while the manifest is being applied.
	ManifestProgressing = "Progressing"
	// ManifestComplete is true when the object has finished; it is no longer updated.
	ManifestComplete = "Complete"
	// ManifestStatusFeedbackSynced is true when the feedback rules were read successfully.
	ManifestStatusFeedbackSynced = "StatusFeedbackSynced"
	// ManifestDrifted is true while the object differs from its manifest and
	// the agent cannot put it back; false once it did (a Flotilla extension,
	// absent until the object first drifts).
	ManifestDrifted = "Drifted"
)

// Reasons of the Drifted condition of a manifest, and what ManifestDrift.Fields
// holds for an object that was deleted (Flotilla extensions).
const (
	// ReasonDriftCorrected is the Drifted=False reason once the agent put the object back.
	ReasonDriftCorrected = "DriftCorrected"
	// ReasonDriftNotCorrected is the Drifted=True reason when the agent could not put it back.
	ReasonDriftNotCorrected = "DriftNotCorrected"
	// DriftWholeObject in ManifestDrift.Fields means the object had been deleted.
	DriftWholeObject = "*"
)

// Reasons of the work's conditions.
const (
	// ReasonAppliedManifestWorkComplete is the Applied=True reason of a work.
	ReasonAppliedManifestWorkComplete = "AppliedManifestWorkComplete"
	// ReasonAppliedManifestWorkFailed is the Applied=False reason of a work.
	ReasonAppliedManifestWorkFailed = "AppliedManifestWorkFailed"
	// ReasonResourcesAvailable is the Available=True reason of a work.
	ReasonResourcesAvailable = "ResourcesAvailable"
	// ReasonResourcesNotAvailable is the Available=False reason of a work.
	ReasonResourcesNotAvailable = "ResourcesNotAvailable"
	// ReasonResourcesStatusUnknown is the Available=Unknown reason of a work.
	ReasonResourcesStatusUnknown = "ResourcesStatusUnknown"
	// ReasonManifestsComplete is the Complete=True reason of a work.
	ReasonManifestsComplete = "ManifestsComplete"
	// ReasonProgressingApplying is the Progressing=True reason while resources are applied.
	ReasonProgressingApplying = "Applying"
	// ReasonProgressingCompleted is the Progressing=False reason once everything is applied and available.
	ReasonProgressingCompleted = "Completed"
	// ReasonProgressingFailed is the Progressing=False reason when the work failed to apply.
	ReasonProgressingFailed = "Failed"
	// ReasonManifestsDegraded is the Degraded=True reason of a work with a degraded manifest.
	ReasonManifestsDegraded = "ManifestsDegraded"
	// ReasonManifestsNotDegraded is the Degraded=False reason of a work.
	ReasonManifestsNotDegraded = "ManifestsNotDegraded"
)

// Reasons of a manifest's conditions.
const (
	// ReasonAppliedManifestComplete is the Applied=True reason of a manifest.
	ReasonAppliedManifestComplete = "AppliedManifestComplete"
	// ReasonAppliedManifestFailed is the Applied=False reason of a manifest, also on apply conflicts.
	ReasonAppliedManifestFailed = "AppliedManifestFailed"
	// ReasonResourceAvailable is the Available=True reason of a manifest.
	ReasonResourceAvailable = "ResourceAvailable"
	// ReasonResourceNotAvailable is the Available=False reason of a manifest.
	ReasonResourceNotAvailable = "ResourceNotAvailable"
	// ReasonFetchingResourceFailed is the Available=Unknown reason when the object could not be read.
	ReasonFetchingResourceFailed = "FetchingResourceFailed"
	// ReasonIncompleteResourceMeta is the Available=Unknown reason when the manifest does not name an object fully (OCM's spelling).
	ReasonIncompleteResourceMeta = "IncompletedResourceMeta"
	// ReasonStatusFeedbackSynced is the StatusFeedbackSynced=True reason when values were read.
	ReasonStatusFeedbackSynced = "StatusFeedbackSynced"
	// ReasonNoStatusFeedbackSynced is the StatusFeedbackSynced=True reason when no value was selected.
	ReasonNoStatusFeedbackSynced = "NoStatusFeedbackSynced"
	// ReasonStatusFeedbackSyncFailed is the StatusFeedbackSynced=False reason.
	ReasonStatusFeedbackSyncFailed = "StatusFeedbackSyncFailed"
)

// Reasons of conditions set by condition rules; all begin with "ConditionRule".
const (
	// ConditionRuleReasonPrefix begins every reason set by a condition rule.
	ConditionRuleReasonPrefix = "ConditionRule"
	// ConditionRuleEvaluated is set when a rule was evaluated without error.
	ConditionRuleEvaluated = "ConditionRuleEvaluated"
	// ConditionRuleInvalid is set when a rule cannot be evaluated.
	ConditionRuleInvalid = "ConditionRuleInvalid"
	// ConditionRuleExpressionError is set when an expression of the rule fails.
	ConditionRuleExpressionError = "ConditionRuleExpressionError"
	// ConditionRuleInternalError is set when evaluation fails for a reason other than the expression.
	ConditionRuleInternalError = "ConditionRuleInternalError"
)

// Delete propagation policies.
const (
	// DeletePropagationPolicyTypeForeground deletes every applied object with the work (the default).
	DeletePropagationPolicyTypeForeground DeletePropagationPolicyType = "Foreground"
	// DeletePropagationPolicyTypeOrphan keeps every applied object.
	DeletePropagationPolicyTypeOrphan DeletePropagationPolicyType = "Orphan"
	// DeletePropagationPolicyTypeSelectivelyOrphan keeps the objects listed in selectivelyOrphans.
	DeletePropagationPolicyTypeSelectivelyOrphan DeletePropagationPolicyType = "SelectivelyOrphan"
)

// Update strategies.
const (
	// UpdateStrategyTypeUpdate creates or updates the object, ignoring fields the manifest does not set (the default).
	UpdateStrategyTypeUpdate UpdateStrategyType = "Update"
	// UpdateStrategyTypeCreateOnly creates the object and never updates it.
	UpdateStrategyTypeCreateOnly UpdateStrategyType = "CreateOnly"
	// UpdateStrategyTypeServerSideApply applies the object with server-side apply.
	UpdateStrategyTypeServerSideApply UpdateStrategyType = "ServerSideApply"
	// UpdateStrategyTypeReadOnly never writes the object, only reads its status.
	UpdateStrategyTypeReadOnly UpdateStrategyType = "ReadOnly"
)

// DefaultFieldManager is the server-side apply field manager when none is given; others must begin with it.
const DefaultFieldManager = "work-agent"

// Conditions of ignoreFields.
const (
	// IgnoreFieldsConditionOnSpokePresent ignores the fields once the object exists (the default).
	IgnoreFieldsConditionOnSpokePresent IgnoreFieldsCondition = "OnSpokePresent"
	// IgnoreFieldsConditionOnSpokeChange ignores the fields once they were changed on the managed cluster.
	IgnoreFieldsConditionOnSpokeChange IgnoreFieldsCondition = "OnSpokeChange"
)

// Feedback rule types.
const (
	// WellKnownStatusType reports built-in status fields of common kinds.
	WellKnownStatusType FeedbackType = "WellKnownStatus"
	// JSONPathsType reports the status fields named by jsonPaths.
	JSONPathsType FeedbackType = "JSONPaths"
)

// Feedback scrape types.
const (
	// FeedbackPollType reads status feedback at each resync (the default).
	FeedbackPollType FeedbackScrapeType = "Poll"
	// FeedbackWatchType reads status feedback whenever the object changes.
	FeedbackWatchType FeedbackScrapeType = "Watch"
)

// Feedback value types.
const (
	// Integer marks a FieldValue holding integer.
	Integer ValueType = "Integer"
	// String marks a FieldValue holding string.
	String ValueType = "String"
	// Boolean marks a FieldValue holding boolean.
	Boolean ValueType = "Boolean"
	// JSONRaw marks a FieldValue holding jsonRaw.
	JSONRaw ValueType = "JsonRaw"
)

// MaxJSONRawLength is the longest jsonRaw feedback value, in bytes.
const MaxJSONRawLength = 1024

// Condition rule types.
const (
	// CELConditionExpressionsType evaluates the rule's celExpressions.
	CELConditionExpressionsType ConditionRuleType = "CEL"
	// WellKnownConditionsType applies built-in completion rules for common kinds.
	WellKnownConditionsType ConditionRuleType = "WellKnownConditions"
)

// ExecutorSubjectTypeServiceAccount is the executor subject type of a service account.
const ExecutorSubjectTypeServiceAccount ManifestWorkExecutorSubjectType = "ServiceAccount"

// Finalizers, labels and annotations.
const (
	// ManifestWorkFinalizer holds a ManifestWork until its AppliedManifestWork on the managed cluster is gone.
	ManifestWorkFinalizer = "cluster.open-cluster-management.io/manifest-work-cleanup"
	// AppliedManifestWorkFinalizer holds an AppliedManifestWork until the objects it applied are deleted.
	AppliedManifestWorkFinalizer = "cluster.open-cluster-management.io/applied-manifest-work-cleanup"
	// ObjectSpecHashAnnotation on an applied object holds the hash of its manifest.
	ObjectSpecHashAnnotation = "open-cluster-management.io/object-hash"
	// ManifestWorkReplicaSetLabel on a ManifestWork names its ManifestWorkReplicaSet as <namespace>.<name>.
	ManifestWorkReplicaSetLabel = "work.open-cluster-management.io/manifestworkreplicaset"
	// ManifestWorkReplicaSetPlacementNameLabel on a ManifestWork names the Placement that chose its cluster.
	ManifestWorkReplicaSetPlacementNameLabel = "work.open-cluster-management.io/placementname"
)
