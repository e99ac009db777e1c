package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func init() {
	objects = append(objects, &ManagedClusterSetBinding{}, &ManagedClusterSetBindingList{})
}

// ManagedClusterSetBinding makes a ManagedClusterSet available to the
// Placements of its namespace. Its name equals spec.clusterSet, and creating
// it requires create on managedclustersets/bind.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName={mclsetbinding,mclsetbindings}
// +kubebuilder:subresource:status
type ManagedClusterSetBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec names the bound set.
	// +optional
	Spec ManagedClusterSetBindingSpec `json:"spec,omitempty"`

	// status is the current state of the binding.
	// +optional
	Status ManagedClusterSetBindingStatus `json:"status,omitempty"`
}

// ManagedClusterSetBindingSpec names the ManagedClusterSet to bind.
type ManagedClusterSetBindingSpec struct {
	// clusterSet is the name of the bound ManagedClusterSet. It must equal the
	// binding's name and cannot change.
	// +kubebuilder:validation:MinLength=1
	// +optional
	ClusterSet string `json:"clusterSet,omitempty"`
}

// ManagedClusterSetBindingStatus is the observed state of a ManagedClusterSetBinding.
type ManagedClusterSetBindingStatus struct {
	// conditions hold the status conditions of the binding.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ManagedClusterSetBindingList is a list of ManagedClusterSetBindings.
//
// +kubebuilder:object:root=true
type ManagedClusterSetBindingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the ManagedClusterSetBindings.
	Items []ManagedClusterSetBinding `json:"items"`
}
