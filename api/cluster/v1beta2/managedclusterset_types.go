package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
)

func init() { objects = append(objects, &ManagedClusterSet{}, &ManagedClusterSetList{}) }

// ManagedClusterSet is a group of ManagedClusters that workloads can be placed on.
//
// With the default selector a cluster joins the set through the label
// cluster.open-cluster-management.io/clusterset=<set>; adding, changing or
// removing that label requires create on managedclustersets/join for the old
// and the new set.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName={mclset,mclsets}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Empty",type=string,JSONPath=`.status.conditions[?(@.type=="ClusterSetEmpty")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ManagedClusterSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec selects the member clusters of the set.
	// +kubebuilder:default={clusterSelector: {selectorType: ExclusiveClusterSetLabel}}
	// +optional
	Spec ManagedClusterSetSpec `json:"spec"`

	// status is the current state of the set.
	// +optional
	Status ManagedClusterSetStatus `json:"status,omitempty"`
}

// ManagedClusterSetSpec selects the member clusters of a ManagedClusterSet.
type ManagedClusterSetSpec struct {
	// clusterSelector selects the member clusters.
	// +kubebuilder:default={selectorType: ExclusiveClusterSetLabel}
	// +optional
	ClusterSelector ManagedClusterSelector `json:"clusterSelector"`

	// managedNamespaces are namespaces to manage on every member cluster.
	// +listType=map
	// +listMapKey=name
	// +optional
	ManagedNamespaces []clusterv1.ManagedNamespaceConfig `json:"managedNamespaces,omitempty"`
}

// ManagedClusterSelector selects ManagedClusters, either by the clusterset label
// or by a label selector.
type ManagedClusterSelector struct {
	// selectorType is how members are selected: ExclusiveClusterSetLabel uses
	// the label cluster.open-cluster-management.io/clusterset=<set name>,
	// LabelSelector uses labelSelector.
	// +kubebuilder:default=ExclusiveClusterSetLabel
	// +required
	SelectorType SelectorType `json:"selectorType,omitempty"`

	// labelSelector selects the members when selectorType is LabelSelector.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

// SelectorType is how a ManagedClusterSet selects its members.
// +kubebuilder:validation:Enum=ExclusiveClusterSetLabel;LabelSelector
type SelectorType string

const (
	// ExclusiveClusterSetLabel selects the clusters labelled
	// cluster.open-cluster-management.io/clusterset=<set name>; a cluster
	// belongs to at most one such set.
	ExclusiveClusterSetLabel SelectorType = "ExclusiveClusterSetLabel"
	// LabelSelector selects the clusters matching spec.clusterSelector.labelSelector.
	LabelSelector SelectorType = "LabelSelector"
)

// ManagedClusterSetStatus is the observed state of a ManagedClusterSet.
type ManagedClusterSetStatus struct {
	// conditions hold the status conditions of the set.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ManagedClusterSetList is a list of ManagedClusterSets.
//
// +kubebuilder:object:root=true
type ManagedClusterSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the ManagedClusterSets.
	Items []ManagedClusterSet `json:"items"`
}
