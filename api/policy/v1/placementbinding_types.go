package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// API groups a PlacementBinding refers to.
const (
	// PlacementAPIGroup is the API group of Placement.
	PlacementAPIGroup = "cluster.open-cluster-management.io"
	// PlacementKind is the kind of Placement.
	PlacementKind = "Placement"
	// PlacementRuleAPIGroup is the API group of the deprecated PlacementRule.
	PlacementRuleAPIGroup = "apps.open-cluster-management.io"
	// PlacementRuleKind is the kind of the deprecated PlacementRule.
	PlacementRuleKind = "PlacementRule"
)

// PlacementBinding binds a placement to policies or policy sets, with optional overrides.
// Its fields sit at the top level, beside metadata: it has no spec.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=pb
// +kubebuilder:subresource:status
type PlacementBinding struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// placementRef is the placement whose decisions receive the subjects.
	PlacementRef PlacementSubject `json:"placementRef"`
	// subjects are the policies and policy sets to place.
	// +kubebuilder:validation:MinItems=1
	Subjects []Subject `json:"subjects"`
	// bindingOverrides change the subjects on the clusters of this binding.
	// +optional
	BindingOverrides BindingOverrides `json:"bindingOverrides,omitzero"`
	// subFilter "restricted" applies the overrides to the clusters of this binding without placing
	// the subjects there; another binding must place them.
	// +optional
	SubFilter SubFilter `json:"subFilter,omitempty"`
	// status is reserved; OCM writes nothing here.
	// +optional
	Status PlacementBindingStatus `json:"status,omitzero"`
}

// PlacementSubject names the placement of a PlacementBinding.
//
// +kubebuilder:validation:XValidation:rule="(self.apiGroup == 'cluster.open-cluster-management.io' && self.kind == 'Placement') || (self.apiGroup == 'apps.open-cluster-management.io' && self.kind == 'PlacementRule')",message="apiGroup and kind must be cluster.open-cluster-management.io Placement or apps.open-cluster-management.io PlacementRule"
type PlacementSubject struct {
	// apiGroup is cluster.open-cluster-management.io for Placement, apps.open-cluster-management.io
	// for the deprecated PlacementRule.
	// +kubebuilder:validation:Enum=apps.open-cluster-management.io;cluster.open-cluster-management.io
	// +kubebuilder:validation:MinLength=1
	APIGroup string `json:"apiGroup"`
	// kind is Placement, or the deprecated PlacementRule.
	// +kubebuilder:validation:Enum=PlacementRule;Placement
	// +kubebuilder:validation:MinLength=1
	Kind string `json:"kind"`
	// name of the placement, in the binding's namespace.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// Subject is a policy or policy set bound to a placement.
type Subject struct {
	// apiGroup is policy.open-cluster-management.io.
	// +kubebuilder:validation:Enum=policy.open-cluster-management.io
	// +kubebuilder:validation:MinLength=1
	APIGroup string `json:"apiGroup"`
	// kind is Policy or PolicySet.
	// +kubebuilder:validation:Enum=Policy;PolicySet
	// +kubebuilder:validation:MinLength=1
	Kind string `json:"kind"`
	// name of the policy or policy set, in the binding's namespace.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// BindingOverrides change the bound policies on the clusters of one binding.
type BindingOverrides struct {
	// remediationAction, when set, must be enforce: it turns the policies to enforce on these clusters.
	// +kubebuilder:validation:Enum=Enforce;enforce
	// +optional
	RemediationAction RemediationAction `json:"remediationAction,omitempty"`
}

// PlacementBindingStatus is the observed state of a PlacementBinding (currently empty).
type PlacementBindingStatus struct{}

// PlacementBindingList is a list of PlacementBindings.
//
// +kubebuilder:object:root=true
type PlacementBindingList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the placement bindings.
	Items []PlacementBinding `json:"items"`
}

func init() { objects = append(objects, &PlacementBinding{}, &PlacementBindingList{}) }
