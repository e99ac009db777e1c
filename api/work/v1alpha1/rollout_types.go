package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// RolloutStrategy is how a workload reaches the clusters of a Placement.
// Only the field named by type is read.
type RolloutStrategy struct {
	// Type is All (every cluster at once), Progressive (a few clusters at a
	// time) or ProgressivePerGroup (one decision group at a time).
	// +kubebuilder:default=All
	// +optional
	Type RolloutType `json:"type,omitempty"`

	// All configures type All.
	// +optional
	All *RolloutAll `json:"all,omitempty"`

	// Progressive configures type Progressive.
	// +optional
	Progressive *RolloutProgressive `json:"progressive,omitempty"`

	// ProgressivePerGroup configures type ProgressivePerGroup.
	// +optional
	ProgressivePerGroup *RolloutProgressivePerGroup `json:"progressivePerGroup,omitempty"`
}

// RolloutType names a rollout strategy.
//
// +kubebuilder:validation:Enum=All;Progressive;ProgressivePerGroup
type RolloutType string

// RolloutConfig holds the timing and failure budget shared by every rollout type.
type RolloutConfig struct {
	// MinSuccessTime is how long a step must stay successful before the
	// rollout proceeds (Progressive types only), e.g. 2h, 90m, 360s.
	// +kubebuilder:default="0"
	// +optional
	MinSuccessTime metav1.Duration `json:"minSuccessTime,omitzero"`

	// ProgressDeadline is how long to wait for a cluster to succeed before it
	// counts as failed, e.g. 2h, 90m, 360s; None waits forever.
	// +kubebuilder:default=None
	// +kubebuilder:validation:Pattern=`^(([0-9])+[h|m|s])|None$`
	// +optional
	ProgressDeadline string `json:"progressDeadline,omitempty"`

	// MaxFailures is how many clusters (a number or a percentage) may fail
	// before the rollout stops (Progressive types only; mandatory decision
	// groups tolerate none).
	// +kubebuilder:default=0
	// +kubebuilder:validation:Pattern=`^((100|[0-9]{1,2})%|[0-9]+)$`
	// +kubebuilder:validation:XIntOrString
	// +optional
	MaxFailures intstr.IntOrString `json:"maxFailures,omitzero"`
}

// RolloutAll configures rollout type All.
type RolloutAll struct {
	RolloutConfig `json:",inline"`
}

// RolloutProgressive configures rollout type Progressive.
type RolloutProgressive struct {
	RolloutConfig `json:",inline"`

	// MandatoryDecisionGroups are rolled out first, and must all succeed.
	// +optional
	MandatoryDecisionGroups []MandatoryDecisionGroup `json:"mandatoryDecisionGroups,omitempty"`

	// MaxConcurrency is how many clusters (a number or a percentage) receive
	// the workload at once; by default the Placement's clustersPerDecisionGroup.
	// +kubebuilder:validation:Pattern=`^((100|[0-9]{1,2})%|[0-9]+)$`
	// +kubebuilder:validation:XIntOrString
	// +optional
	MaxConcurrency intstr.IntOrString `json:"maxConcurrency,omitzero"`
}

// RolloutProgressivePerGroup configures rollout type ProgressivePerGroup.
type RolloutProgressivePerGroup struct {
	RolloutConfig `json:",inline"`

	// MandatoryDecisionGroups are rolled out first, and must all succeed.
	// +optional
	MandatoryDecisionGroups []MandatoryDecisionGroup `json:"mandatoryDecisionGroups,omitempty"`
}

// MandatoryDecisionGroup names a decision group by name, or else by index.
type MandatoryDecisionGroup struct {
	// GroupName matches label cluster.open-cluster-management.io/decision-group-name
	// of the PlacementDecisions.
	// +optional
	GroupName string `json:"groupName,omitempty"`

	// GroupIndex matches label cluster.open-cluster-management.io/decision-group-index
	// of the PlacementDecisions.
	// +optional
	GroupIndex int32 `json:"groupIndex,omitempty"`
}
