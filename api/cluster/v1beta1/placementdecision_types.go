package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func init() { objects = append(objects, &PlacementDecision{}, &PlacementDecisionList{}) }

// PlacementDecision holds part of the result of a Placement, at most
// MaxDecisionsPerPlacementDecision clusters. It carries the label
// cluster.open-cluster-management.io/placement=<placement name>, and its
// decisions together list every cluster the Placement selected.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:subresource:status
type PlacementDecision struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// status holds the decisions.
	// +optional
	Status PlacementDecisionStatus `json:"status,omitempty"`
}

// PlacementDecisionStatus holds the decisions of a PlacementDecision.
type PlacementDecisionStatus struct {
	// decisions are the selected clusters, at most 100.
	// +required
	Decisions []ClusterDecision `json:"decisions"`
}

// ClusterDecision is one selected cluster.
type ClusterDecision struct {
	// clusterName is the name of the ManagedCluster, unique across the
	// Placement's decisions.
	// +required
	ClusterName string `json:"clusterName"`

	// reason says why the cluster was selected.
	// +required
	Reason string `json:"reason"`

	// score is the cluster's combined prioritizer score.
	// +optional
	Score int64 `json:"score,omitempty"`
}

// PlacementDecisionList is a list of PlacementDecisions.
//
// +kubebuilder:object:root=true
type PlacementDecisionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the PlacementDecisions.
	Items []PlacementDecision `json:"items"`
}
