package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ConfigurationPolicy compares objects on a managed cluster with object templates and reports
// (inform) or fixes (enforce) the differences. It runs on the spoke, usually delivered inside a
// Policy's policy-templates.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Compliance state",type="string",JSONPath=".status.compliant"
// +kubebuilder:metadata:labels="policy.open-cluster-management.io/policy-type=template"
type ConfigurationPolicy struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired configuration and how to handle a mismatch.
	Spec ConfigurationPolicySpec `json:"spec"`
	// status is the compliance found at the last evaluation.
	// +optional
	Status ConfigurationPolicyStatus `json:"status,omitzero"`
}

// ConfigurationPolicySpec is the desired configuration of objects on the cluster; exactly one of
// object-templates and object-templates-raw is set.
//
// +kubebuilder:validation:XValidation:rule="has(self.object__dash__templates) != has(self.object__dash__templates__dash__raw)",message="exactly one of object-templates and object-templates-raw must be set"
type ConfigurationPolicySpec struct {
	// remediationAction is inform (report only) or enforce (create, update or delete to comply).
	// +kubebuilder:validation:Enum=Inform;inform;Enforce;enforce
	// +kubebuilder:default=inform
	RemediationAction RemediationAction `json:"remediationAction"`
	// severity of a violation: low, medium, high or critical.
	// +optional
	Severity Severity `json:"severity,omitempty"`
	// namespaceSelector selects the namespaces of namespaced templates that name no namespace.
	// +optional
	NamespaceSelector NamespaceSelector `json:"namespaceSelector,omitzero"`
	// object-templates are the objects to check, create, update or delete.
	// +optional
	ObjectTemplates []ObjectTemplate `json:"object-templates,omitempty"`
	// object-templates-raw is Go template text that must render to a YAML list of object templates.
	// +optional
	ObjectTemplatesRaw string `json:"object-templates-raw,omitempty"`
	// pruneObjectBehavior says which managed objects are deleted when the policy stops managing them
	// (enforce only).
	// +kubebuilder:default=None
	// +optional
	PruneObjectBehavior PruneObjectBehavior `json:"pruneObjectBehavior,omitempty"`
	// evaluationInterval sets the least time between evaluations, per compliance state.
	// +optional
	EvaluationInterval EvaluationInterval `json:"evaluationInterval,omitzero"`
	// customMessage replaces the compliance messages with Go templates, which see .DefaultMessage and .Policy.
	// +optional
	CustomMessage CustomMessage `json:"customMessage,omitzero"`
}

// NamespaceSelector selects namespaces by name globs and labels; all rules are ANDed.
// With labels but no include, include behaves as ["*"].
//
// +structType=atomic
type NamespaceSelector struct {
	// include are filepath globs of namespace names to select.
	// +optional
	Include []NonEmptyString `json:"include,omitempty"`
	// exclude are filepath globs of namespace names to leave out.
	// +optional
	Exclude []NonEmptyString `json:"exclude,omitempty"`
	// matchLabels selects namespaces with all of these labels.
	// +optional
	MatchLabels map[string]string `json:"matchLabels,omitempty"`
	// matchExpressions selects namespaces matching all of these label requirements.
	// +listType=atomic
	// +optional
	MatchExpressions []metav1.LabelSelectorRequirement `json:"matchExpressions,omitempty"`
	// terminatingInclusion says whether namespaces being deleted are selected.
	// +kubebuilder:default=Default
	// +optional
	TerminatingInclusion TerminatingInclusion `json:"terminatingInclusion,omitempty"`
}

// ObjectTemplate is the desired state of objects on the cluster.
type ObjectTemplate struct {
	// complianceType is musthave, mustonlyhave or mustnothave, in any of the listed spellings.
	// +kubebuilder:validation:Enum=MustHave;Musthave;musthave;MustOnlyHave;Mustonlyhave;mustonlyhave;MustNotHave;Mustnothave;mustnothave
	ComplianceType ComplianceType `json:"complianceType"`
	// metadataComplianceType, when set, compares labels and annotations as musthave or mustonlyhave
	// instead of complianceType.
	// +kubebuilder:validation:Enum=MustHave;Musthave;musthave;MustOnlyHave;Mustonlyhave;mustonlyhave
	// +optional
	MetadataComplianceType ComplianceType `json:"metadataComplianceType,omitempty"`
	// objectDefinition is the object, whole or in part, to compare with the cluster.
	// +kubebuilder:pruning:PreserveUnknownFields
	ObjectDefinition runtime.RawExtension `json:"objectDefinition"`
	// objectSelector selects objects by label when objectDefinition names none.
	// +optional
	ObjectSelector *metav1.LabelSelector `json:"objectSelector,omitempty"`
	// recreateOption says when to delete and recreate an object instead of updating it.
	// +kubebuilder:default=None
	// +optional
	RecreateOption RecreateOption `json:"recreateOption,omitempty"`
	// recordDiff says where to record how the object differs from objectDefinition. Defaults to
	// None for kinds with sensitive data (Secret, ConfigMap, ...), InStatus otherwise.
	// +optional
	RecordDiff RecordDiff `json:"recordDiff,omitempty"`
}

// EvaluationInterval is the least time between evaluations, as a duration ("10s", "1h30m"),
// "watch" (re-evaluate on every change, the default) or "never".
type EvaluationInterval struct {
	// compliant is the interval while compliant.
	// +kubebuilder:validation:Pattern=`^(?:(?:(?:[0-9]+(?:.[0-9])?)(?:h|m|s|(?:ms)|(?:us)|(?:ns)))|never|watch)+$`
	// +optional
	Compliant string `json:"compliant,omitempty"`
	// noncompliant is the interval while not compliant.
	// +kubebuilder:validation:Pattern=`^(?:(?:(?:[0-9]+(?:.[0-9])?)(?:h|m|s|(?:ms)|(?:us)|(?:ns)))|never|watch)+$`
	// +optional
	NonCompliant string `json:"noncompliant,omitempty"`
}

// CustomMessage holds Go templates for the compliance message.
type CustomMessage struct {
	// compliant is the template of the message when compliant.
	// +optional
	Compliant string `json:"compliant,omitempty"`
	// noncompliant is the template of the message when not compliant or unknown.
	// +optional
	NonCompliant string `json:"noncompliant,omitempty"`
}

// ConfigurationPolicyStatus is the compliance found at the last evaluation.
type ConfigurationPolicyStatus struct {
	// compliant is the overall compliance.
	// +kubebuilder:validation:Enum=Compliant;Pending;NonCompliant;Terminating
	// +optional
	ComplianceState ComplianceState `json:"compliant,omitempty"`
	// compliancyDetails has one entry per object template, in the same order.
	// +optional
	CompliancyDetails []TemplateStatus `json:"compliancyDetails,omitempty"`
	// relatedObjects are the objects the templates matched or looked for.
	// +optional
	RelatedObjects []RelatedObject `json:"relatedObjects,omitempty"`
	// lastEvaluated is the RFC 3339 time of the last evaluation.
	// +optional
	LastEvaluated string `json:"lastEvaluated,omitempty"`
	// lastEvaluatedGeneration is metadata.generation at the last evaluation.
	// +optional
	LastEvaluatedGeneration int64 `json:"lastEvaluatedGeneration,omitempty"`
	// history lists the recent compliance messages, newest first, at most 10.
	// +optional
	History []HistoryEvent `json:"history,omitempty"`
}

// TemplateStatus is the compliance of one object template.
type TemplateStatus struct {
	// Compliant is the compliance of the template (capitalized on the wire).
	// +kubebuilder:validation:Enum=Compliant;Pending;NonCompliant;Terminating
	// +optional
	ComplianceState ComplianceState `json:"Compliant,omitempty"`
	// Validity is deprecated and kept for wire compatibility.
	// +optional
	Validity Validity `json:"Validity,omitzero"`
	// conditions are the results of the last evaluation of the template.
	// +optional
	Conditions []TemplateCondition `json:"conditions,omitempty"`
}

// Validity is a deprecated validity report of a template.
type Validity struct {
	// valid reports whether the template was valid.
	// +optional
	Valid *bool `json:"valid,omitempty"`
	// reason explains valid.
	// +optional
	Reason string `json:"reason,omitempty"`
}

// TemplateCondition is one result of evaluating an object template (not a metav1.Condition).
type TemplateCondition struct {
	// type is violation or notification.
	Type string `json:"type"`
	// status is unused; when set it is True.
	// +optional
	Status string `json:"status,omitempty"`
	// lastTransitionTime is when the condition last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitzero"`
	// reason is a short summary.
	// +optional
	Reason string `json:"reason,omitempty"`
	// message is the compliance message.
	// +optional
	Message string `json:"message,omitempty"`
}

// Condition types of a TemplateCondition.
const (
	// ConditionViolation reports a template that is not complied with.
	ConditionViolation = "violation"
	// ConditionNotification reports a template that is complied with.
	ConditionNotification = "notification"
)

// RelatedObject is an object matched, created or looked for by a template.
type RelatedObject struct {
	// object identifies the object.
	// +optional
	Object ObjectResource `json:"object,omitzero"`
	// compliant is the compliance of this object.
	// +optional
	Compliant string `json:"compliant,omitempty"`
	// reason says why the object has that compliance.
	// +optional
	Reason string `json:"reason,omitempty"`
	// properties are further facts about the object.
	// +optional
	Properties *ObjectProperties `json:"properties,omitempty"`
}

// ObjectResource identifies a related object.
type ObjectResource struct {
	// kind of the object.
	// +optional
	Kind string `json:"kind,omitempty"`
	// apiVersion of the object.
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`
	// metadata names the object.
	// +optional
	Metadata ObjectMetadata `json:"metadata,omitzero"`
}

// ObjectMetadata is the name and namespace of a related object.
type ObjectMetadata struct {
	// name of the object.
	// +optional
	Name string `json:"name,omitempty"`
	// namespace of the object; empty for cluster-scoped objects.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// ObjectProperties are facts about a related object that pruning and reporting need.
type ObjectProperties struct {
	// createdByPolicy reports whether the policy created the object (used by DeleteIfCreated).
	// +optional
	CreatedByPolicy *bool `json:"createdByPolicy,omitempty"`
	// uid is the object's UID, so that pruning deletes only the object it created.
	// +optional
	UID string `json:"uid,omitempty"`
	// diff is how the object differs from objectDefinition (recordDiff InStatus).
	// +optional
	Diff string `json:"diff,omitempty"`
	// matchesAfterDryRun reports an object that differed but matched after a dry-run update.
	// +optional
	MatchesAfterDryRun bool `json:"matchesAfterDryRun,omitempty"`
}

// HistoryEvent is one past compliance message.
type HistoryEvent struct {
	// lastTimestamp is when the message was emitted.
	// +optional
	LastTimestamp metav1.Time `json:"lastTimestamp,omitzero"`
	// message is the compliance message.
	// +optional
	Message string `json:"message,omitempty"`
}

// ConfigurationPolicyList is a list of ConfigurationPolicies.
//
// +kubebuilder:object:root=true
type ConfigurationPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the configuration policies.
	Items []ConfigurationPolicy `json:"items"`
}

func init() { objects = append(objects, &ConfigurationPolicy{}, &ConfigurationPolicyList{}) }
