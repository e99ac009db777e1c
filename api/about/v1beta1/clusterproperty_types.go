package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func init() { objects = append(objects, &ClusterProperty{}, &ClusterPropertyList{}) }

// Well-known ClusterProperty names (KEP-2149).
const (
	// ClusterIDProperty names the property that holds the cluster's id,
	// unique within its ClusterSet for as long as it is a member.
	ClusterIDProperty = "cluster.clusterset.k8s.io"
	// ClusterSetProperty names the property that holds the ClusterSet the
	// cluster belongs to.
	ClusterSetProperty = "clusterset.k8s.io"
)

// ClusterProperty is one named fact about the cluster it lives on, set by
// the cluster's owner, such as its id within a ClusterSet. Flotilla's agent
// reads every ClusterProperty into a cluster claim of the same name.
//
// about.k8s.io is a protected group: the API server installs its CRD only
// with an api-approved.kubernetes.io annotation, which the SIG's published
// CRD lacks. Ours says so, in the form the API server accepts.
//
// +kubebuilder:object:root=true
// +kubebuilder:metadata:annotations="api-approved.kubernetes.io=unapproved: the About API CRD (KEP-2149) is published without an approval link"
// +kubebuilder:resource:scope=Cluster,categories=multicluster
// +kubebuilder:storageversion
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
