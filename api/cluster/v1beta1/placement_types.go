package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
)

func init() { objects = append(objects, &Placement{}, &PlacementList{}) }

// Placement selects ManagedClusters from the ManagedClusterSets bound to its
// namespace; the result is written to PlacementDecisions.
//
// Candidates are the members of the bound sets (narrowed by spec.clusterSets),
// filtered by predicates and taints, then scored by the prioritizers; the best
// numberOfClusters of them are chosen.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Succeeded",type=string,JSONPath=`.status.conditions[?(@.type=="PlacementSatisfied")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="PlacementSatisfied")].reason`
// +kubebuilder:printcolumn:name="SelectedClusters",type=integer,JSONPath=`.status.numberOfSelectedClusters`
type Placement struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec says which clusters to select.
	// +required
	Spec PlacementSpec `json:"spec"`

	// status is the current result of the placement.
	// +optional
	Status PlacementStatus `json:"status,omitempty"`
}

// PlacementSpec says which clusters a Placement selects.
type PlacementSpec struct {
	// clusterSets limits the candidates to these bound ManagedClusterSets;
	// empty means all sets bound to the namespace.
	// +optional
	ClusterSets []string `json:"clusterSets,omitempty"`

	// numberOfClusters is how many clusters to select; unset means every
	// cluster that qualifies.
	// +optional
	NumberOfClusters *int32 `json:"numberOfClusters,omitempty"`

	// predicates select clusters; a cluster qualifies if it matches any of them.
	// +optional
	Predicates []ClusterPredicate `json:"predicates,omitempty"`

	// prioritizerPolicy says how candidates are scored; unset means the
	// default prioritizers.
	// +optional
	PrioritizerPolicy PrioritizerPolicy `json:"prioritizerPolicy,omitempty"`

	// spreadPolicy says how decisions spread over topologies.
	// +optional
	SpreadPolicy SpreadPolicy `json:"spreadPolicy,omitempty"`

	// tolerations let the placement select clusters with matching taints.
	// +optional
	Tolerations []Toleration `json:"tolerations,omitempty"`

	// decisionStrategy divides the decisions into groups.
	// +optional
	DecisionStrategy DecisionStrategy `json:"decisionStrategy,omitempty"`

	// sortBy orders the decisions: by cluster name, or by descending score
	// and then cluster name.
	// +kubebuilder:default=ClusterName
	// +optional
	SortBy SortBy `json:"sortBy,omitempty"`

	// scoreRateLimit is the shortest interval between score-only updates of
	// the decisions, e.g. 30s, 1m or 2h.
	// +kubebuilder:validation:Pattern=`^[0-9]+[hms]$`
	// +kubebuilder:default="1m"
	// +optional
	ScoreRateLimit string `json:"scoreRateLimit,omitempty"`
}

// SortBy is the order of the decisions of a Placement.
// +kubebuilder:validation:Enum=ClusterName;Score
type SortBy string

const (
	// SortByClusterName orders decisions alphanumerically by cluster name.
	SortByClusterName SortBy = "ClusterName"
	// SortByScore orders decisions by descending score, then cluster name.
	SortByScore SortBy = "Score"
)

// ClusterPredicate is one way for a cluster to qualify.
type ClusterPredicate struct {
	// requiredClusterSelector must match a cluster for it to qualify; a
	// selected cluster that stops matching is eventually removed.
	// +optional
	RequiredClusterSelector ClusterSelector `json:"requiredClusterSelector,omitempty"`
}

// ClusterSelector selects clusters by labels, claims and CEL expressions; all
// given parts must match.
type ClusterSelector struct {
	// labelSelector selects clusters by label.
	// +optional
	LabelSelector metav1.LabelSelector `json:"labelSelector,omitempty"`

	// claimSelector selects clusters by the claims in their status.
	// +optional
	ClaimSelector ClusterClaimSelector `json:"claimSelector,omitempty"`

	// celSelector selects clusters by CEL expressions over the ManagedCluster.
	// +optional
	CelSelector ClusterCelSelector `json:"celSelector,omitempty"`
}

// GroupClusterSelector selects the clusters of a decision group by labels and claims.
type GroupClusterSelector struct {
	// labelSelector selects clusters by label.
	// +optional
	LabelSelector metav1.LabelSelector `json:"labelSelector,omitempty"`

	// claimSelector selects clusters by the claims in their status.
	// +optional
	ClaimSelector ClusterClaimSelector `json:"claimSelector,omitempty"`
}

// ClusterClaimSelector selects clusters by their status.clusterClaims.
type ClusterClaimSelector struct {
	// matchExpressions are requirements on claim names and values, ANDed.
	// +optional
	MatchExpressions []metav1.LabelSelectorRequirement `json:"matchExpressions,omitempty"`
}

// ClusterCelSelector selects clusters by CEL expressions.
type ClusterCelSelector struct {
	// celExpressions are CEL expressions over the variable managedCluster, ANDed.
	// +optional
	CelExpressions []string `json:"celExpressions,omitempty"`
}

// PrioritizerPolicy says how candidate clusters are scored.
type PrioritizerPolicy struct {
	// mode is Additive (configurations adjust the defaults, where Steady and
	// Balance weigh 1) or Exact (only the listed prioritizers count).
	// +kubebuilder:default=Additive
	// +optional
	Mode PrioritizerPolicyModeType `json:"mode,omitempty"`

	// configurations are the prioritizers and their weights.
	// +optional
	Configurations []PrioritizerConfig `json:"configurations,omitempty"`
}

// PrioritizerPolicyModeType is the mode of a PrioritizerPolicy.
type PrioritizerPolicyModeType string

const (
	// PrioritizerPolicyModeAdditive applies the configurations on top of the defaults.
	PrioritizerPolicyModeAdditive PrioritizerPolicyModeType = "Additive"
	// PrioritizerPolicyModeExact uses only the listed configurations.
	PrioritizerPolicyModeExact PrioritizerPolicyModeType = "Exact"
)

// PrioritizerConfig is one prioritizer and its weight.
type PrioritizerConfig struct {
	// scoreCoordinate names the prioritizer and its score source.
	// +required
	ScoreCoordinate *ScoreCoordinate `json:"scoreCoordinate,omitempty"`

	// weight multiplies the prioritizer's score (-100..100); 0 disables it and
	// a negative weight prefers low scores. Unset means 1.
	// +kubebuilder:validation:Minimum=-10
	// +kubebuilder:validation:Maximum=10
	// +kubebuilder:default=1
	// +optional
	Weight *int32 `json:"weight,omitempty"`
}

// ScoreCoordinate names a prioritizer: built in, or a score of an AddOnPlacementScore.
type ScoreCoordinate struct {
	// type is BuiltIn or AddOn.
	// +kubebuilder:validation:Enum=BuiltIn;AddOn
	// +kubebuilder:default=BuiltIn
	// +required
	Type string `json:"type,omitempty"`

	// builtIn names a built-in prioritizer when type is BuiltIn: Balance,
	// Steady, ResourceAllocatableCPU, ResourceAllocatableMemory or Spread.
	// +optional
	BuiltIn string `json:"builtIn,omitempty"`

	// addOn names the score to use when type is AddOn.
	// +optional
	AddOn *AddOnScore `json:"addOn,omitempty"`
}

// AddOnScore names one score of the AddOnPlacementScores in the cluster namespaces.
type AddOnScore struct {
	// resourceName is the name of the AddOnPlacementScore.
	// +required
	ResourceName string `json:"resourceName"`

	// scoreName is the name of the score within it.
	// +required
	ScoreName string `json:"scoreName"`
}

// SpreadPolicy says how decisions spread over topologies.
type SpreadPolicy struct {
	// spreadConstraints are applied in order.
	// +kubebuilder:validation:MaxItems=8
	// +optional
	SpreadConstraints []SpreadConstraintsTerm `json:"spreadConstraints,omitempty"`
}

// SpreadConstraintsTerm spreads decisions over the values of one label or claim.
type SpreadConstraintsTerm struct {
	// topologyKey is the label key or claim name that defines the topologies.
	// +kubebuilder:validation:MaxLength=316
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`
	// +required
	TopologyKey string `json:"topologyKey"`

	// topologyKeyType says whether topologyKey is a Label or a Claim.
	// +kubebuilder:validation:Enum=Label;Claim
	// +required
	TopologyKeyType TopologyKeyType `json:"topologyKeyType"`

	// maxSkew is the largest allowed difference between the number of selected
	// clusters in a topology and the smallest such number.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=1
	// +optional
	MaxSkew int32 `json:"maxSkew,omitempty"`

	// whenUnsatisfiable is what to do when maxSkew cannot be met.
	// +kubebuilder:validation:Enum=DoNotSchedule;ScheduleAnyway
	// +kubebuilder:default=ScheduleAnyway
	// +optional
	WhenUnsatisfiable UnsatisfiableMaxSkewAction `json:"whenUnsatisfiable,omitempty"`
}

// TopologyKeyType says what a topology key refers to.
type TopologyKeyType string

const (
	// TopologyKeyTypeLabel means the key is a cluster label.
	TopologyKeyTypeLabel TopologyKeyType = "Label"
	// TopologyKeyTypeClaim means the key is a cluster claim.
	TopologyKeyTypeClaim TopologyKeyType = "Claim"
)

// UnsatisfiableMaxSkewAction is what to do when maxSkew cannot be met.
type UnsatisfiableMaxSkewAction string

const (
	// DoNotSchedule selects no more clusters.
	DoNotSchedule UnsatisfiableMaxSkewAction = "DoNotSchedule"
	// ScheduleAnyway keeps selecting clusters.
	ScheduleAnyway UnsatisfiableMaxSkewAction = "ScheduleAnyway"
)

// Toleration lets a placement select clusters whose taints match it.
type Toleration struct {
	// key is the taint key to match; empty with operator Exists matches every taint.
	// +kubebuilder:validation:MaxLength=316
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$`
	// +optional
	Key string `json:"key,omitempty"`

	// operator is Equal (key and value match) or Exists (key matches).
	// +kubebuilder:default=Equal
	// +optional
	Operator TolerationOperator `json:"operator,omitempty"`

	// value is the taint value to match; empty with operator Exists.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Value string `json:"value,omitempty"`

	// effect is the taint effect to match; empty matches every effect.
	// +optional
	Effect clusterv1.TaintEffect `json:"effect,omitempty"`

	// tolerationSeconds is how long, from the taint's timeAdded, a NoSelect or
	// PreferNoSelect taint is tolerated; unset means forever.
	// +optional
	TolerationSeconds *int64 `json:"tolerationSeconds,omitempty"`
}

// TolerationOperator is how a toleration matches a taint.
type TolerationOperator string

const (
	// TolerationOpExists matches any value of the key.
	TolerationOpExists TolerationOperator = "Exists"
	// TolerationOpEqual matches the key and the value.
	TolerationOpEqual TolerationOperator = "Equal"
)

// DecisionStrategy divides the decisions of a placement into groups.
type DecisionStrategy struct {
	// groupStrategy says how the selected clusters are grouped.
	// +optional
	GroupStrategy GroupStrategy `json:"groupStrategy,omitempty"`
}

// GroupStrategy says how the selected clusters are grouped.
type GroupStrategy struct {
	// decisionGroups are named groups, filled first; the remaining clusters
	// form further groups.
	// +optional
	DecisionGroups []DecisionGroup `json:"decisionGroups,omitempty"`

	// clustersPerDecisionGroup is the largest group size, as a number or a
	// percentage of the selected clusters.
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:Pattern=`^((100|[1-9][0-9]{0,1})%|[1-9][0-9]*)$`
	// +kubebuilder:default="100%"
	// +optional
	ClustersPerDecisionGroup intstr.IntOrString `json:"clustersPerDecisionGroup,omitempty"`
}

// DecisionGroup is a named group of decisions.
type DecisionGroup struct {
	// groupName is the value of the decision-group-name label on the group's
	// PlacementDecisions.
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9][-A-Za-z0-9_.]{0,61}[a-zA-Z0-9]$`
	// +required
	GroupName string `json:"groupName"`

	// groupClusterSelector selects the clusters of the group.
	// +required
	ClusterSelector GroupClusterSelector `json:"groupClusterSelector"`
}

// PlacementStatus is the current result of a Placement.
type PlacementStatus struct {
	// numberOfSelectedClusters is the number of selected clusters.
	// +optional
	NumberOfSelectedClusters int32 `json:"numberOfSelectedClusters"`

	// decisionGroups are the decision groups and their PlacementDecisions.
	// +optional
	DecisionGroups []DecisionGroupStatus `json:"decisionGroups,omitempty"`

	// conditions hold the status conditions of the placement.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// lastScoreUpdateTime is when the scores in the decisions were last updated.
	// +optional
	LastScoreUpdateTime *metav1.Time `json:"lastScoreUpdateTime,omitempty"`
}

// DecisionGroupStatus is one decision group of a Placement.
type DecisionGroupStatus struct {
	// decisionGroupIndex is the index of the group; without a decision
	// strategy every decision is in group 0.
	// +optional
	DecisionGroupIndex int32 `json:"decisionGroupIndex"`

	// decisionGroupName is the name of the group from the decision strategy.
	// +optional
	DecisionGroupName string `json:"decisionGroupName,omitempty"`

	// decisions are the names of the group's PlacementDecisions.
	// +optional
	Decisions []string `json:"decisions,omitempty"`

	// clusterCount is the number of clusters in the group.
	// +kubebuilder:default=0
	// +optional
	ClustersCount int32 `json:"clusterCount"`
}

// PlacementList is a list of Placements.
//
// +kubebuilder:object:root=true
type PlacementList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the Placements.
	Items []Placement `json:"items"`
}
