package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Unknown fields are kept by the API server, not pruned, at every level of
// the Policy outside its status, so that the hub's admission webhook sees
// them and refuses the Policy naming the field, whatever field validation
// the client asks for (pruning happens while decoding, before admission).
// The policy templates' objectDefinitions are checked by the agent.
// +kubebuilder:pruning:PreserveUnknownFields

// Policy wraps policy engine resources in its policy-templates and delivers them to the
// managed clusters chosen by the PlacementBindings that name it.
//
// A root Policy lives in a namespace of the user's choice; the hub copies it into each chosen
// cluster namespace as "<namespace>.<name>", and the copy carries that cluster's status.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=plc
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Remediation action",type="string",JSONPath=".spec.remediationAction"
// +kubebuilder:printcolumn:name="Compliance state",type="string",JSONPath=".status.compliant"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type Policy struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is required by the OCM schema.
	metav1.ObjectMeta `json:"metadata"`

	// spec lists the policy templates to deliver and how to apply them.
	Spec PolicySpec `json:"spec"`
	// status is the compliance of the policy: per template on a replicated policy, per cluster on a root policy.
	// +optional
	Status PolicyStatus `json:"status,omitzero"`
}

// Unknown fields are kept for the admission webhook; see Policy.
// +kubebuilder:pruning:PreserveUnknownFields

// PolicySpec lists the policy engine resources to deliver and how to apply them.
type PolicySpec struct {
	// disabled, when true, removes the policy from every managed cluster.
	Disabled bool `json:"disabled"`
	// remediationAction, when set, overrides the remediationAction of every template (inform or enforce).
	// +kubebuilder:validation:Enum=Inform;inform;Enforce;enforce
	// +optional
	RemediationAction RemediationAction `json:"remediationAction,omitempty"`
	// copyPolicyMetadata copies all labels and annotations of the policy to its replicas when
	// true (the default); when false only the policy framework's own are copied.
	// +optional
	CopyPolicyMetadata *bool `json:"copyPolicyMetadata,omitempty"`
	// hubTemplateOptions changes how hub templates ({{hub ... hub}}) are resolved.
	// +optional
	HubTemplateOptions *HubTemplateOptions `json:"hubTemplateOptions,omitempty"`
	// policy-templates are the policy engine resources to create on the managed clusters.
	PolicyTemplates []PolicyTemplate `json:"policy-templates"`
	// dependencies hold every template back (Pending) until each named object reaches the named compliance.
	// +optional
	Dependencies []PolicyDependency `json:"dependencies,omitempty"`
}

// Unknown fields are kept for the admission webhook; see Policy.
// +kubebuilder:pruning:PreserveUnknownFields

// HubTemplateOptions changes how hub templates are resolved.
type HubTemplateOptions struct {
	// serviceAccountName is a service account in the policy's namespace whose permissions bound
	// the hub template lookups. Without it, lookups are limited to the policy's namespace and
	// the cluster's ManagedCluster.
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
}

// Unknown fields are kept for the admission webhook; see Policy.
// +kubebuilder:pruning:PreserveUnknownFields

// PolicyTemplate is one policy engine resource to create on the managed cluster.
type PolicyTemplate struct {
	// objectDefinition is the policy engine resource, for example a ConfigurationPolicy.
	// +kubebuilder:pruning:PreserveUnknownFields
	ObjectDefinition runtime.RawExtension `json:"objectDefinition"`
	// extraDependencies hold this template back (Pending) in addition to the policy's dependencies.
	// +optional
	ExtraDependencies []PolicyDependency `json:"extraDependencies,omitempty"`
	// ignorePending leaves this template out of the policy's compliance while it is Pending.
	// +optional
	IgnorePending bool `json:"ignorePending,omitempty"`
}

// Unknown fields are kept for the admission webhook; see Policy.
// +kubebuilder:pruning:PreserveUnknownFields

// PolicyDependency names an object that must reach a compliance state before a template is created.
//
// +kubebuilder:validation:XValidation:rule="!(self.kind in ['CertificatePolicy', 'ConfigurationPolicy']) || !has(self.__namespace__) || size(self.__namespace__) == 0",message="namespace must be empty for a CertificatePolicy or ConfigurationPolicy dependency"
type PolicyDependency struct {
	// apiVersion of the object depended on.
	APIVersion string `json:"apiVersion"`
	// kind of the object depended on.
	Kind string `json:"kind"`
	// name of the object depended on.
	Name string `json:"name"`
	// namespace of the object depended on; empty means the policy's own namespace.
	// Must be empty for template kinds, which live beside the replicated policy.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// compliance the object must report in .status.compliant.
	// +kubebuilder:validation:Enum=Compliant;Pending;NonCompliant
	Compliance ComplianceState `json:"compliance"`
}

// PolicyStatus is the observed compliance of a policy.
type PolicyStatus struct {
	// compliant is the overall compliance: on a replicated policy from its templates,
	// on a root policy rolled up from its clusters.
	// +kubebuilder:validation:Enum=Compliant;Pending;NonCompliant
	// +optional
	ComplianceState ComplianceState `json:"compliant,omitempty"`
	// placement lists the placements bound to the policy (root policy only).
	// +optional
	Placement []Placement `json:"placement,omitempty"`
	// status lists the compliance of each managed cluster (root policy only).
	// +optional
	Status []CompliancePerClusterStatus `json:"status,omitempty"`
	// details lists the compliance of each template (replicated policy only).
	// +optional
	Details []DetailsPerTemplate `json:"details,omitempty"`
}

// Placement is a placement bound to a policy, with what it decided.
type Placement struct {
	// placementBinding is the PlacementBinding that binds the placement.
	// +optional
	PlacementBinding string `json:"placementBinding,omitempty"`
	// placement is the cluster.open-cluster-management.io Placement bound to the policy.
	// +optional
	Placement string `json:"placement,omitempty"`
	// placementRule is the deprecated apps.open-cluster-management.io PlacementRule bound to the policy.
	// +optional
	PlacementRule string `json:"placementRule,omitempty"`
	// policySet, when set, is the PolicySet through which the policy is bound to the placement.
	// +optional
	PolicySet string `json:"policySet,omitempty"`
	// decisions are the managed clusters the placement chose for this binding.
	// +optional
	Decisions []PlacementDecision `json:"decisions,omitempty"`
	// exclusions are the managed clusters a PolicySet exclusion keeps the policy away from.
	// +optional
	Exclusions []PolicyExclusion `json:"exclusions,omitempty"`
}

// PlacementDecision is a managed cluster chosen by a placement.
type PlacementDecision struct {
	// clusterName is the managed cluster.
	// +optional
	ClusterName string `json:"clusterName,omitempty"`
	// clusterNamespace is the hub namespace of the managed cluster.
	// +optional
	ClusterNamespace string `json:"clusterNamespace,omitempty"`
}

// PolicyExclusion is a managed cluster excluded from propagation by a PolicySet exclusion.
type PolicyExclusion struct {
	// clusterName is the excluded managed cluster.
	// +optional
	ClusterName string `json:"clusterName,omitempty"`
}

// CompliancePerClusterStatus is the compliance of the policy on one managed cluster.
type CompliancePerClusterStatus struct {
	// clustername is the managed cluster.
	// +optional
	ClusterName string `json:"clustername,omitempty"`
	// clusternamespace is the hub namespace of the managed cluster.
	// +optional
	ClusterNamespace string `json:"clusternamespace,omitempty"`
	// compliant is the compliance the cluster reported.
	// +kubebuilder:validation:Enum=Compliant;Pending;NonCompliant
	// +optional
	ComplianceState ComplianceState `json:"compliant,omitempty"`
	// remainingBindings are the bindings that still place the policy on a cluster a PolicySet excludes it from.
	// +optional
	RemainingBindings []RemainingBinding `json:"remainingBindings,omitempty"`
}

// RemainingBinding is a PlacementBinding that still places a policy on an excluded cluster.
type RemainingBinding struct {
	// placementBinding is the name of the binding.
	// +optional
	PlacementBinding string `json:"placementBinding,omitempty"`
}

// DetailsPerTemplate is the compliance of one policy template, with its recent messages.
type DetailsPerTemplate struct {
	// templateMeta is the metadata of the template object (name, namespace, ...).
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	TemplateMeta metav1.ObjectMeta `json:"templateMeta,omitzero"`
	// compliant is the compliance the template reported.
	// +kubebuilder:validation:Enum=Compliant;Pending;NonCompliant
	// +optional
	ComplianceState ComplianceState `json:"compliant,omitempty"`
	// history lists the recent compliance messages, newest first, at most 10.
	// +optional
	History []ComplianceHistory `json:"history,omitempty"`
	// results is what the last evaluation found, object by object (a Flotilla
	// extension; OCM reports only the messages of history).
	// +optional
	Results *TemplateResults `json:"results,omitempty"`
}

// ComplianceHistory is one compliance message of a template.
type ComplianceHistory struct {
	// lastTimestamp is when the message was reported.
	// +optional
	LastTimestamp metav1.Time `json:"lastTimestamp,omitzero"`
	// message is the compliance message, for example "Compliant; notification - ...".
	// +optional
	Message string `json:"message,omitempty"`
	// eventName is the name of the event that carried the message.
	// +optional
	EventName string `json:"eventName,omitempty"`
}

// PolicyList is a list of Policies.
//
// +kubebuilder:object:root=true
type PolicyList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the policies.
	Items []Policy `json:"items"`
}

func init() { objects = append(objects, &Policy{}, &PolicyList{}) }
