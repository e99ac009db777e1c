package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func init() { objects = append(objects, &PlacementDecision{}, &PlacementDecisionList{}) }

const (
	// DecisionKeyLabel links the slices of one scheduling decision: every
	// slice carries the same value.
	DecisionKeyLabel = "multicluster.x-k8s.io/decision-key"
	// DecisionIndexLabel is a slice's place in its decision, "0" for the
	// first: a consumer joins the slices in this order.
	DecisionIndexLabel = "multicluster.x-k8s.io/decision-index"
	// PlacementKeyLabel names the placement request the decision answers,
	// the same value on the workloads placed by it: a consumer finds a
	// workload's decisions by it.
	PlacementKeyLabel = "multicluster.x-k8s.io/placement-key"
	// MaxDecisionsPerSlice caps the decisions of one PlacementDecision.
	MaxDecisionsPerSlice = 100
)

// PlacementDecision is the vendor-neutral record of the clusters a
// scheduler chose (KEP-5313): data only, written by the scheduler and read
// by any consumer. One decision may span several objects ("slices") of at
// most 100 clusters each, linked by the DecisionKeyLabel.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced
type PlacementDecision struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// decisions are the chosen clusters of this slice.
	// +kubebuilder:validation:MinItems=0
	// +kubebuilder:validation:MaxItems=100
	// +required
	Decisions []ClusterDecision `json:"decisions"`
	// schedulerName names the scheduler that wrote the decision.
	// +optional
	SchedulerName string `json:"schedulerName,omitempty"`
}

// ClusterDecision names one chosen cluster by its ClusterProfile.
type ClusterDecision struct {
	// clusterProfileRef is the chosen cluster's ClusterProfile.
	// +required
	ClusterProfileRef ClusterProfileReference `json:"clusterProfileRef"`
	// reason says, optionally, why the cluster was chosen.
	// +optional
	Reason string `json:"reason,omitempty"`
}

// ClusterProfileReference names a ClusterProfile.
type ClusterProfileReference struct {
	// name is the ClusterProfile's name.
	// +required
	Name string `json:"name"`
	// namespace is the ClusterProfile's namespace; empty means the
	// PlacementDecision's own.
	// +optional
	Namespace string `json:"namespace,omitempty"`
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
