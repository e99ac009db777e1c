package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func init() { objects = append(objects, &AddOnPlacementScore{}, &AddOnPlacementScoreList{}) }

// AddOnPlacementScore holds scores of one managed cluster for Placements to
// use; it lives in the cluster's hub namespace.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:subresource:status
type AddOnPlacementScore struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// status holds the scores.
	// +optional
	Status AddOnPlacementScoreStatus `json:"status,omitempty"`
}

// AddOnPlacementScoreStatus holds the scores of an AddOnPlacementScore.
type AddOnPlacementScoreStatus struct {
	// conditions hold the status conditions of the scores.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// scores are the named scores of the cluster.
	// +listType=map
	// +listMapKey=name
	// +optional
	Scores []AddOnPlacementScoreItem `json:"scores,omitempty"`

	// validUntil is when Placements stop trusting the scores; unset means never.
	// The owner keeps the scores up to date.
	// +optional
	ValidUntil *metav1.Time `json:"validUntil,omitempty"`
}

// AddOnPlacementScoreItem is one named score.
type AddOnPlacementScoreItem struct {
	// name is the name of the score.
	// +required
	Name string `json:"name"`

	// value is the score, from -100 to 100.
	// +kubebuilder:validation:Minimum=-100
	// +kubebuilder:validation:Maximum=100
	// +required
	Value int32 `json:"value"`
}

// AddOnPlacementScoreList is a list of AddOnPlacementScores.
//
// +kubebuilder:object:root=true
type AddOnPlacementScoreList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the AddOnPlacementScores.
	Items []AddOnPlacementScore `json:"items"`
}
