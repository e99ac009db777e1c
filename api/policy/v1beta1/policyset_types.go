package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

// PolicySet groups policies of one namespace so that a single PlacementBinding places them
// all; its status rolls up their compliance.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=plcset
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Compliance state",type="string",JSONPath=".status.compliant"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type PolicySet struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec lists the policies of the set.
	Spec PolicySetSpec `json:"spec"`
	// status is the rolled-up compliance of the policies.
	// +optional
	Status PolicySetStatus `json:"status,omitzero"`
}

// PolicySetSpec lists the policies of a set.
type PolicySetSpec struct {
	// description of the policy set.
	// +optional
	Description string `json:"description,omitempty"`
	// policies are names of Policies in the set's namespace.
	Policies []policyv1.NonEmptyString `json:"policies"`
	// exclusions keep single policies of the set away from some clusters of the set's placements.
	// +optional
	Exclusions []PolicySetExclusion `json:"exclusions,omitempty"`
}

// PolicySetExclusion keeps one policy of the set away from some managed clusters.
type PolicySetExclusion struct {
	// policyName is a policy of the set.
	PolicyName policyv1.NonEmptyString `json:"policyName"`
	// clusterNames are the managed clusters the policy is not propagated to through this set.
	// +kubebuilder:validation:MinItems=1
	ClusterNames []policyv1.NonEmptyString `json:"clusterNames"`
	// reason explains the exclusion.
	// +optional
	Reason string `json:"reason,omitempty"`
}

// PolicySetStatus is the rolled-up compliance of the policies of a set.
type PolicySetStatus struct {
	// compliant is NonCompliant if any policy is, else Pending if any policy is, else Compliant.
	// +kubebuilder:validation:Enum=Compliant;Pending;NonCompliant
	// +optional
	Compliant policyv1.ComplianceState `json:"compliant,omitempty"`
	// placement lists the placements bound to the set.
	// +optional
	Placement []PolicySetStatusPlacement `json:"placement,omitempty"`
	// statusMessage explains the state while compliance cannot be determined, e.g. missing policies.
	// +optional
	StatusMessage string `json:"statusMessage,omitempty"`
	// exclusions are the exclusions in effect.
	// +optional
	Exclusions []PolicySetStatusExclusion `json:"exclusions,omitempty"`
}

// PolicySetStatusPlacement is a placement bound to a policy set.
type PolicySetStatusPlacement struct {
	// placementBinding is the PlacementBinding that binds the placement.
	// +optional
	PlacementBinding string `json:"placementBinding,omitempty"`
	// placement is the cluster.open-cluster-management.io Placement bound to the set.
	// +optional
	Placement string `json:"placement,omitempty"`
	// placementRule is the deprecated apps.open-cluster-management.io PlacementRule bound to the set.
	// +optional
	PlacementRule string `json:"placementRule,omitempty"`
}

// PolicySetStatusExclusion is an exclusion in effect for one policy of the set.
type PolicySetStatusExclusion struct {
	// policyName is the excluded policy.
	PolicyName policyv1.NonEmptyString `json:"policyName"`
	// clusters are the managed clusters the policy is excluded from.
	// +kubebuilder:validation:MinItems=1
	Clusters []policyv1.NonEmptyString `json:"clusters"`
}

// PolicySetList is a list of PolicySets.
//
// +kubebuilder:object:root=true
type PolicySetList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the policy sets.
	Items []PolicySet `json:"items"`
}

func init() { objects = append(objects, &PolicySet{}, &PolicySetList{}) }
