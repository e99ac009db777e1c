package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func init() { objects = append(objects, &ManifestWork{}, &ManifestWorkList{}) }

// ManifestWork is a set of Kubernetes objects that the hub asks the agent of
// one managed cluster to apply. It lives in that cluster's namespace on the hub.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:subresource:status
type ManifestWork struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the workload to apply on the managed cluster and how to apply it.
	// +optional
	Spec ManifestWorkSpec `json:"spec,omitempty"`

	// Status is what the agent last reported about the workload.
	// +optional
	Status ManifestWorkStatus `json:"status,omitempty"`
}

// ManifestWorkList is a list of ManifestWorks.
//
// +kubebuilder:object:root=true
type ManifestWorkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the ManifestWorks.
	Items []ManifestWork `json:"items"`
}

// ManifestWorkSpec is the desired workload of a ManifestWork.
type ManifestWorkSpec struct {
	// Workload holds the manifests to apply on the managed cluster.
	// +optional
	Workload ManifestsTemplate `json:"workload,omitzero"`

	// DeleteOption says what happens to the applied objects when the work is deleted.
	// Foreground deletion of every object applies when unset.
	// +optional
	DeleteOption *DeleteOption `json:"deleteOption,omitempty"`

	// ManifestConfigs tune how individual manifests are applied and reported.
	// +optional
	ManifestConfigs []ManifestConfigOption `json:"manifestConfigs,omitempty"`

	// Executor is the identity the agent applies the manifests as; when unset
	// the agent applies them with its own identity.
	// +optional
	Executor *ManifestWorkExecutor `json:"executor,omitempty"`
}

// ManifestsTemplate is the list of manifests of a ManifestWork.
type ManifestsTemplate struct {
	// Manifests are the Kubernetes objects to apply on the managed cluster.
	// +optional
	Manifests []Manifest `json:"manifests,omitempty"`
}

// Manifest is one complete Kubernetes object, kept as raw JSON.
type Manifest struct {
	// +kubebuilder:validation:EmbeddedResource
	// +kubebuilder:pruning:PreserveUnknownFields
	runtime.RawExtension `json:",inline"`
}

// DeleteOption is the deletion strategy of a ManifestWork.
type DeleteOption struct {
	// PropagationPolicy is Foreground (delete every applied object), Orphan
	// (keep them all) or SelectivelyOrphan (keep those in selectivelyOrphans).
	// +kubebuilder:default=Foreground
	// +optional
	PropagationPolicy DeletePropagationPolicyType `json:"propagationPolicy,omitempty"`

	// SelectivelyOrphan lists the objects kept when propagationPolicy is SelectivelyOrphan.
	// +optional
	SelectivelyOrphan *SelectivelyOrphan `json:"selectivelyOrphans,omitempty"`

	// TTLSecondsAfterFinished deletes the work this many seconds after its
	// Complete condition became true; unset means never, zero means at once.
	// +optional
	TTLSecondsAfterFinished *int64 `json:"ttlSecondsAfterFinished,omitempty"`
}

// DeletePropagationPolicyType is how deleting a ManifestWork treats the objects it applied.
//
// +kubebuilder:validation:Enum=Foreground;Orphan;SelectivelyOrphan
type DeletePropagationPolicyType string

// SelectivelyOrphan lists applied objects to keep when their ManifestWork is deleted.
type SelectivelyOrphan struct {
	// OrphaningRules each name one object of this work to orphan.
	// +optional
	OrphaningRules []OrphaningRule `json:"orphaningRules,omitempty"`
}

// OrphaningRule names one object of the work to leave in place on deletion.
type OrphaningRule ResourceIdentifier

// ResourceIdentifier names one object on the managed cluster by group, resource,
// namespace and name.
type ResourceIdentifier struct {
	// Group is the API group of the object; empty for the core group.
	// +optional
	Group string `json:"group"`

	// Resource is the plural resource name, e.g. deployments.
	// +required
	Resource string `json:"resource"`

	// Name is the name of the object.
	// +required
	Name string `json:"name"`

	// Namespace is the namespace of the object; empty for cluster-scoped objects.
	// +optional
	Namespace string `json:"namespace"`
}

// ManifestConfigOption configures how one manifest of the work is applied and reported.
type ManifestConfigOption struct {
	// ResourceIdentifier selects the manifest; rules naming an object that the
	// work does not apply are ignored.
	// +required
	ResourceIdentifier ResourceIdentifier `json:"resourceIdentifier"`

	// FeedbackRules say which status fields of the object are reported back.
	// +optional
	FeedbackRules []FeedbackRule `json:"feedbackRules,omitempty"`

	// FeedbackScrapeType is how the agent notices status changes: Poll or Watch.
	// +kubebuilder:default=Poll
	// +optional
	FeedbackScrapeType FeedbackScrapeType `json:"feedbackScrapeType,omitempty"`

	// UpdateStrategy is how the object is updated; Update when unset.
	// +optional
	UpdateStrategy *UpdateStrategy `json:"updateStrategy,omitempty"`

	// ConditionRules set conditions on the manifest from its live state.
	// +listType=map
	// +listMapKey=condition
	// +optional
	ConditionRules []ConditionRule `json:"conditionRules,omitempty"`
}

// FeedbackScrapeType is how the agent watches an applied object for status feedback.
//
// +kubebuilder:validation:Enum=Poll;Watch
type FeedbackScrapeType string

// UpdateStrategy is how the agent updates an object that already exists.
type UpdateStrategy struct {
	// Type is Update (update, ignoring fields the manifest does not set),
	// ServerSideApply, CreateOnly (never update) or ReadOnly (only read status).
	// +kubebuilder:default=Update
	// +required
	Type UpdateStrategyType `json:"type"`

	// ServerSideApply configures server-side apply; used only with type ServerSideApply.
	// +optional
	ServerSideApply *ServerSideApplyConfig `json:"serverSideApply,omitempty"`
}

// UpdateStrategyType names an update strategy.
//
// +kubebuilder:validation:Enum=Update;CreateOnly;ServerSideApply;ReadOnly
type UpdateStrategyType string

// ServerSideApplyConfig configures server-side apply of a manifest.
type ServerSideApplyConfig struct {
	// Force takes ownership of conflicting fields instead of failing.
	// +optional
	Force bool `json:"force,omitempty"`

	// FieldManager is the field manager of the apply; it must begin with work-agent.
	// +kubebuilder:default=work-agent
	// +kubebuilder:validation:Pattern=`^work-agent`
	// +optional
	FieldManager string `json:"fieldManager,omitempty"`

	// IgnoreFields are fields the agent leaves alone once the object exists.
	// +listType=map
	// +listMapKey=condition
	// +optional
	IgnoreFields []IgnoreField `json:"ignoreFields,omitempty"`
}

// IgnoreField lists paths that server-side apply skips under a condition.
type IgnoreField struct {
	// Condition is when the paths are ignored: OnSpokePresent (once the object
	// exists) or OnSpokeChange (once it was changed on the managed cluster).
	// +kubebuilder:default=OnSpokePresent
	// +required
	Condition IgnoreFieldsCondition `json:"condition"`

	// JSONPaths are Kubernetes JSONPath expressions of the ignored fields.
	// +optional
	JSONPaths []string `json:"jsonPaths,omitempty"`

	// JSONPointers are RFC 6901 pointers to the ignored fields, e.g. /spec/replicas.
	// +optional
	JSONPointers []string `json:"jsonPointers,omitempty"`

	// JQPathExpressions are jq path expressions of the ignored fields.
	// +optional
	JQPathExpressions []string `json:"jqPathExpressions,omitempty"`
}

// IgnoreFieldsCondition is when ignored fields are left alone.
//
// +kubebuilder:validation:Enum=OnSpokePresent;OnSpokeChange
type IgnoreFieldsCondition string

// FeedbackRule selects status fields of an applied object to report to the hub.
type FeedbackRule struct {
	// Type is WellKnownStatus (built-in fields of common kinds) or JSONPaths.
	// +required
	Type FeedbackType `json:"type"`

	// JSONPaths are the fields to report when type is JSONPaths.
	// +listType=map
	// +listMapKey=name
	// +optional
	JSONPaths []JSONPath `json:"jsonPaths,omitempty"`
}

// FeedbackType is the kind of a feedback rule.
//
// +kubebuilder:validation:Enum=WellKnownStatus;JSONPaths
type FeedbackType string

// JSONPath names one field under the object's status to report.
type JSONPath struct {
	// Name is the name the value is reported under.
	// +required
	Name string `json:"name"`

	// Version is the API version to read the object at; the preferred version when unset.
	// +optional
	Version string `json:"version,omitempty"`

	// Path is a Kubernetes JSONPath relative to .status. A missing field
	// reports nothing.
	// +required
	Path string `json:"path"`
}

// ConditionRule sets a condition on a manifest from the state of its object.
//
// +kubebuilder:validation:XValidation:rule="self.type != 'CEL' || self.condition != \"\"",message="Condition is required for CEL rules"
type ConditionRule struct {
	// Condition is the type of the condition to set. Complete stops further
	// updates of the manifest once true.
	// +required
	Condition string `json:"condition"`

	// Type is CEL (evaluate celExpressions) or WellKnownConditions (built-in
	// rules for common kinds).
	// +required
	Type ConditionRuleType `json:"type"`

	// CelExpressions are CEL expressions over `object`; the condition is true
	// when all of them are.
	// +optional
	CelExpressions []string `json:"celExpressions,omitempty"`

	// Message is the message of the condition.
	// +optional
	Message string `json:"message,omitempty"`

	// MessageExpression is a CEL expression over `object` and `result` whose
	// non-empty value replaces message.
	// +optional
	MessageExpression string `json:"messageExpression,omitempty"`
}

// ConditionRuleType is how a condition rule is evaluated.
//
// +kubebuilder:validation:Enum=WellKnownConditions;CEL
type ConditionRuleType string

// ManifestWorkExecutor is the identity the agent applies a work's manifests as.
type ManifestWorkExecutor struct {
	// Subject is the identity.
	// +optional
	Subject ManifestWorkExecutorSubject `json:"subject,omitzero"`
}

// ManifestWorkExecutorSubject is an identity on the managed cluster.
type ManifestWorkExecutorSubject struct {
	// Type is the kind of identity; only ServiceAccount is supported.
	// +required
	Type ManifestWorkExecutorSubjectType `json:"type"`

	// ServiceAccount is the service account to act as, when type is ServiceAccount.
	// +optional
	ServiceAccount *ManifestWorkSubjectServiceAccount `json:"serviceAccount,omitempty"`
}

// ManifestWorkExecutorSubjectType is the kind of an executor identity.
//
// +kubebuilder:validation:Enum=ServiceAccount
type ManifestWorkExecutorSubjectType string

// ManifestWorkSubjectServiceAccount names a service account on the managed cluster.
type ManifestWorkSubjectServiceAccount struct {
	// Namespace is the namespace of the service account.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)$`
	// +required
	Namespace string `json:"namespace"`

	// Name is the name of the service account.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)$`
	// +required
	Name string `json:"name"`
}

// ManifestWorkStatus is what the agent reports about a ManifestWork.
type ManifestWorkStatus struct {
	// Conditions of the whole work: Applied, Available, Progressing, Degraded, Complete.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// ResourceStatus reports on each manifest.
	// +optional
	ResourceStatus ManifestResourceStatus `json:"resourceStatus,omitzero"`
}

// ManifestResourceStatus holds the per-manifest status of a ManifestWork.
type ManifestResourceStatus struct {
	// Manifests holds one entry per manifest.
	// +optional
	Manifests []ManifestCondition `json:"manifests,omitempty"`
}

// ManifestCondition is the status of one manifest on the managed cluster.
type ManifestCondition struct {
	// ResourceMeta identifies the manifest and the object it became.
	// +required
	ResourceMeta ManifestResourceMeta `json:"resourceMeta"`

	// StatusFeedback holds the values selected by the feedback rules.
	// +optional
	StatusFeedback StatusFeedbackResult `json:"statusFeedback,omitzero"`

	// Conditions of this manifest: Applied, Available, StatusFeedbackSynced,
	// and those set by condition rules.
	// +listType=map
	// +listMapKey=type
	// +required
	Conditions []metav1.Condition `json:"conditions"`

	// Drift says how often the agent put the object back after it had been
	// changed on the managed cluster. A Flotilla extension, unknown to OCM;
	// absent until the first correction.
	// +optional
	Drift *ManifestDrift `json:"drift,omitempty"`
}

// ManifestDrift counts the corrections of one applied object that had
// drifted from its manifest on the managed cluster (a Flotilla extension).
type ManifestDrift struct {
	// Corrections is how many times the agent put the object back.
	// +required
	Corrections int64 `json:"corrections"`

	// LastCorrectedTime is when the agent last put the object back.
	// +required
	LastCorrectedTime metav1.Time `json:"lastCorrectedTime"`

	// Fields are the top-level fields of the object (metadata.<field> within
	// metadata) that differed from the manifest at the last correction, or
	// "*" when the object had been deleted and was created again.
	// +optional
	Fields []string `json:"fields,omitempty"`
}

// ManifestResourceMeta identifies a manifest by its index and the object it names.
type ManifestResourceMeta struct {
	// Ordinal is the index of the manifest in spec.workload.manifests.
	// +required
	Ordinal int32 `json:"ordinal"`

	// Group is the API group of the object.
	// +optional
	Group string `json:"group"`

	// Version is the API version of the object.
	// +optional
	Version string `json:"version"`

	// Kind is the kind of the object.
	// +optional
	Kind string `json:"kind"`

	// Resource is the plural resource name of the object.
	// +optional
	Resource string `json:"resource"`

	// Name is the name of the object.
	// +optional
	Name string `json:"name"`

	// Namespace is the namespace of the object.
	// +optional
	Namespace string `json:"namespace"`
}

// StatusFeedbackResult holds the status values reported for one manifest.
type StatusFeedbackResult struct {
	// Values are the reported values, one per name.
	// +listType=map
	// +listMapKey=name
	// +optional
	Values []FeedbackValue `json:"values,omitempty"`
}

// FeedbackValue is one reported status value.
type FeedbackValue struct {
	// Name is the name given by the feedback rule.
	// +required
	Name string `json:"name"`

	// Value is the value read from the object.
	// +required
	Value FieldValue `json:"fieldValue"`
}

// FieldValue is a typed status value; the field named by type is set.
type FieldValue struct {
	// Type is Integer, String, Boolean or JsonRaw.
	// +required
	Type ValueType `json:"type"`

	// Integer is set when type is Integer.
	// +optional
	Integer *int64 `json:"integer,omitempty"`

	// String is set when type is String.
	// +optional
	String *string `json:"string,omitempty"`

	// Boolean is set when type is Boolean.
	// +optional
	Boolean *bool `json:"boolean,omitempty"`

	// JSONRaw is a list or object as JSON text, when type is JsonRaw.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	JSONRaw *string `json:"jsonRaw,omitempty"`
}

// ValueType is the type of a status feedback value.
//
// +kubebuilder:validation:Enum=Integer;String;Boolean;JsonRaw
type ValueType string
