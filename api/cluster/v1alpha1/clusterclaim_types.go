package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func init() { objects = append(objects, &ClusterClaim{}, &ClusterClaimList{}) }

// ClusterClaim is a fact that a managed cluster states about itself, such as
// its id (id.k8s.io). It lives on the managed cluster; the agent copies every
// claim into status.clusterClaims of the cluster's ManagedCluster on the hub.
// The reserved names are listed in the cluster v1 package.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
type ClusterClaim struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec holds the claimed value.
	// +optional
	Spec ClusterClaimSpec `json:"spec,omitempty"`
}

// ClusterClaimSpec holds the value of a ClusterClaim.
type ClusterClaimSpec struct {
	// value is the claimed value; its meaning depends on the claim.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Value string `json:"value,omitempty"`
}

// ClusterClaimList is a list of ClusterClaims.
//
// +kubebuilder:object:root=true
type ClusterClaimList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the ClusterClaims.
	Items []ClusterClaim `json:"items"`
}
