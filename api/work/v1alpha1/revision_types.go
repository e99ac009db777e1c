package v1alpha1

import (
	"k8s.io/apimachinery/pkg/util/intstr"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// The types in this file are Flotilla extensions to ManifestWorkReplicaSet:
// OCM keeps no revisions and never undoes a rollout. Both fields are
// optional, so an OCM ManifestWorkReplicaSet means the same thing here as
// there. docs/rollback.md describes them.
//
// Revisions. Every change of what shapes a cluster's copy (the template,
// the overrides, the replica division) is a revision: an apps/v1
// ControllerRevision in the replica set's namespace, owned by it, labelled
// work.open-cluster-management.io/manifestworkreplicaset: <ns>.<name>,
// whose revision field numbers it and whose data holds those three fields
// (RevisionData). The hub keeps the last RevisionHistoryLimit, and never
// drops the current one or the last complete one. Each ManifestWork of the
// replica set carries the name of the revision it was rendered from in
// annotation RevisionAnnotation. A spec that equals an older revision (an
// undo) makes no new revision: that one takes the next number.

// RevisionHistoryLimit is how many revisions of a replica set the hub keeps.
const RevisionHistoryLimit = 10

// RevisionData is what a revision's ControllerRevision data holds: the
// fields of a replica set's spec that shape each cluster's ManifestWork.
type RevisionData struct {
	// ManifestWorkTemplate is the template of the revision.
	// +optional
	ManifestWorkTemplate workv1.ManifestWorkSpec `json:"manifestWorkTemplate,omitzero"`

	// Overrides are the overrides of the revision.
	// +optional
	Overrides []ClusterOverride `json:"overrides,omitempty"`

	// ReplicaDivision is the replica division of the revision.
	// +optional
	ReplicaDivision *ReplicaDivision `json:"replicaDivision,omitempty"`
}

// RollbackPolicy turns automatic rollback on: when the current revision
// fails its gate (see HealthCheck and the rollout strategy's
// progressDeadline) on FailedClusters of the clusters that took it, the hub
// stops the rollout and moves the clusters that took it back to the last
// complete revision (one that was Available on every cluster it ran on), in
// the rollout's own order and pace. Clusters that never took it are not
// touched. A rollback that fails stops and says so; it never loops. It
// needs a progressive rollout (Progressive or ProgressivePerGroup on every
// placementRef): with All, every cluster takes a revision at once and there
// is nothing left to protect.
type RollbackPolicy struct {
	// FailedClusters is how many clusters (a number, or a percentage of the
	// clusters that took the revision) must fail before the hub rolls back.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Pattern=`^((100|[1-9][0-9]?)%|[1-9][0-9]*)$`
	// +kubebuilder:validation:XIntOrString
	// +optional
	FailedClusters intstr.IntOrString `json:"failedClusters,omitzero"`
}

// HealthCheck adds to the rollout's gate: a cluster succeeds only when its
// ManifestWork is Applied and Available and, for every manifest that
// Target selects and that reports status feedback, every Feedback check and
// the Expression hold. A check that cannot be read yet (a value not
// reported) is not passed; progressDeadline then fails the cluster as it
// does one that never becomes Available.
type HealthCheck struct {
	// Target chooses the manifests checked; empty means every manifest with
	// status feedback.
	// +optional
	Target *ManifestSelector `json:"target,omitempty"`

	// Feedback are status feedback values that must hold, e.g.
	// availableReplicas equal to replicas.
	// +optional
	Feedback []FeedbackCheck `json:"feedback,omitempty"`

	// Expression is a CEL expression over one manifest's feedback that must
	// be true: variables manifest (group, version, kind, resource,
	// namespace, name) and values (a map of feedback value name to its
	// value: int, string, bool, or the parsed JSON of a JsonRaw value), e.g.
	// values.availableReplicas == values.replicas && values.updatedReplicas == values.replicas.
	// +optional
	Expression string `json:"expression,omitempty"`
}

// FeedbackCheck requires a status feedback value of a manifest to equal
// another of its values, or a literal.
type FeedbackCheck struct {
	// Name is the feedback value, e.g. availableReplicas.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`

	// EqualsValue names another feedback value of the same manifest that
	// Name must equal, e.g. replicas.
	// +optional
	EqualsValue string `json:"equalsValue,omitempty"`

	// Equals is a literal Name must equal, compared with the value's string
	// form (3, true, Ready).
	// +optional
	Equals string `json:"equals,omitempty"`
}
