package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

func init() { objects = append(objects, &ManifestWorkReplicaSet{}, &ManifestWorkReplicaSetList{}) }

// ManifestWorkReplicaSet creates one ManifestWork from its template in the
// namespace of every cluster its Placements choose, rolls changes out by the
// given strategy, and removes those ManifestWorks when deleted.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=mwrs
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Placement",type=string,JSONPath=`.status.conditions[?(@.type=="PlacementVerified")].reason`,description="Reason"
// +kubebuilder:printcolumn:name="Found",type=string,JSONPath=`.status.conditions[?(@.type=="PlacementVerified")].status`,description="Configured"
// +kubebuilder:printcolumn:name="ManifestWorks",type=string,JSONPath=`.status.conditions[?(@.type=="ManifestworkApplied")].reason`,description="Reason"
// +kubebuilder:printcolumn:name="Applied",type=string,JSONPath=`.status.conditions[?(@.type=="ManifestworkApplied")].status`,description="Applied"
type ManifestWorkReplicaSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the ManifestWork template and the Placements that choose its clusters.
	// +optional
	Spec ManifestWorkReplicaSetSpec `json:"spec,omitempty"`

	// Status summarises the ManifestWorks created.
	// +optional
	Status ManifestWorkReplicaSetStatus `json:"status,omitempty"`
}

// ManifestWorkReplicaSetList is a list of ManifestWorkReplicaSets.
//
// +kubebuilder:object:root=true
type ManifestWorkReplicaSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the ManifestWorkReplicaSets.
	Items []ManifestWorkReplicaSet `json:"items"`
}

// ManifestWorkReplicaSetSpec is the desired state of a ManifestWorkReplicaSet.
//
// +kubebuilder:validation:XValidation:rule="!has(self.rollback) || self.placementRefs.all(p, has(p.rolloutStrategy) && has(p.rolloutStrategy.type) && p.rolloutStrategy.type != 'All')",message="spec.rollback needs a progressive rollout: set rolloutStrategy.type to Progressive or ProgressivePerGroup on every placementRef (with All every cluster takes a revision at once, and there is nothing left to roll back in order)",fieldPath=".rollback"
type ManifestWorkReplicaSetSpec struct {
	// ManifestWorkTemplate is the spec of every ManifestWork created.
	// +optional
	ManifestWorkTemplate workv1.ManifestWorkSpec `json:"manifestWorkTemplate,omitzero"`

	// PlacementRefs name the Placements, in this namespace, whose decisions
	// choose the clusters.
	// +kubebuilder:validation:MinItems=1
	// +required
	PlacementRefs []LocalPlacementReference `json:"placementRefs"`

	// CascadeDeletionPolicy is Background (the replica set goes at once) or
	// Foreground (it stays until its ManifestWorks are gone).
	// +kubebuilder:default=Background
	// +required
	CascadeDeletionPolicy CascadeDeletionPolicy `json:"cascadeDeletionPolicy,omitempty"`

	// Overrides vary the template per cluster (a Flotilla extension; see
	// docs/overrides.md).
	// +optional
	Overrides []ClusterOverride `json:"overrides,omitempty"`

	// ReplicaDivision splits a total number of replicas across the chosen
	// clusters (a Flotilla extension; see docs/overrides.md).
	// +optional
	ReplicaDivision *ReplicaDivision `json:"replicaDivision,omitempty"`

	// Rollback undoes a revision that fails its gate on the clusters that
	// took it (a Flotilla extension; see docs/rollback.md).
	// +optional
	Rollback *RollbackPolicy `json:"rollback,omitempty"`

	// HealthCheck adds status feedback checks to the rollout's gate (a
	// Flotilla extension; see docs/rollback.md).
	// +optional
	HealthCheck *HealthCheck `json:"healthCheck,omitempty"`
}

// CascadeDeletionPolicy is whether a ManifestWorkReplicaSet waits for its ManifestWorks on deletion.
//
// +kubebuilder:validation:Enum=Background;Foreground
type CascadeDeletionPolicy string

// LocalPlacementReference names a Placement in the replica set's namespace and how to roll out to its clusters.
type LocalPlacementReference struct {
	// Name is the name of the Placement.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`

	// RolloutStrategy is how the clusters of this Placement receive the work.
	// +kubebuilder:default={type: All, all: {progressDeadline: None}}
	// +optional
	RolloutStrategy RolloutStrategy `json:"rolloutStrategy,omitzero"`
}

// ManifestWorkReplicaSetStatus is the observed state of a ManifestWorkReplicaSet.
type ManifestWorkReplicaSetStatus struct {
	// Conditions: PlacementVerified, PlacementRolledOut, ManifestworkApplied.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Summary counts the ManifestWorks of all Placements.
	// +optional
	Summary ManifestWorkReplicaSetSummary `json:"summary,omitzero"`

	// PlacementsSummary counts the ManifestWorks of each Placement.
	// +optional
	PlacementsSummary []PlacementSummary `json:"placementSummary,omitempty"`
}

// PlacementSummary counts the ManifestWorks and decision groups of one Placement.
type PlacementSummary struct {
	// Name is the name of the Placement.
	// +optional
	Name string `json:"name,omitempty"`

	// AvailableDecisionGroups is the decision groups whose ManifestWorks are
	// all available, over all decision groups, e.g. 2/4.
	// +optional
	AvailableDecisionGroups string `json:"availableDecisionGroups,omitempty"`

	// Summary counts the ManifestWorks of this Placement.
	// +optional
	Summary ManifestWorkReplicaSetSummary `json:"summary,omitzero"`
}

// ManifestWorkReplicaSetSummary counts ManifestWorks by state.
type ManifestWorkReplicaSetSummary struct {
	// Total is the number of ManifestWorks that exist for the chosen
	// clusters; works kept for failover on clusters no longer chosen are
	// not counted (the conditions name them).
	// +optional
	Total int `json:"total"`

	// DesiredTotal is the number of ManifestWorks that should exist.
	// +optional
	DesiredTotal int `json:"desiredTotal"`

	// Applied is the number with condition Applied=True.
	// +optional
	Applied int `json:"applied"`

	// Available is the number with condition Available=True.
	// +optional
	Available int `json:"available"`

	// Degraded is the number with condition Degraded=True.
	// +optional
	Degraded int `json:"degraded"`

	// Progressing is the number with condition Progressing=True.
	// +optional
	Progressing int `json:"progressing"`

	// Updated is the number whose spec matches the current template.
	// +optional
	Updated int `json:"updated"`
}
