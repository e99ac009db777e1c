package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func init() { objects = append(objects, &ClusterProperty{}, &ClusterPropertyList{}) }

// ClusterProperty is one named fact about the cluster it lives on, as in
// v1beta1, which is the stored version.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories=multicluster
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="value",type=string,JSONPath=`.spec.value`
// +kubebuilder:printcolumn:name="age",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterProperty struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec holds the property's value.
	// +optional
	Spec ClusterPropertySpec `json:"spec,omitempty"`
	// status is empty: a property is all spec.
	// +optional
	Status ClusterPropertyStatus `json:"status,omitempty"`
}

// ClusterPropertySpec holds a ClusterProperty's value.
type ClusterPropertySpec struct {
	// value is the property's value.
	// +kubebuilder:validation:MinLength=1
	// +required
	Value string `json:"value"`
}

// ClusterPropertyStatus is the (empty) observed state of a ClusterProperty.
type ClusterPropertyStatus struct{}

// ClusterPropertyList is a list of ClusterProperties.
//
// +kubebuilder:object:root=true
type ClusterPropertyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the ClusterProperties.
	Items []ClusterProperty `json:"items"`
}
