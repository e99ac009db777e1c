package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func init() { objects = append(objects, &AppliedManifestWork{}, &AppliedManifestWorkList{}) }

// AppliedManifestWork is the managed cluster's record of one ManifestWork of
// one hub and of the objects it applied. Its name is
// <hubHash>-<manifestWorkName>; every applied object has an ownerReference to
// it, so deleting it removes what the work applied.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:subresource:status
type AppliedManifestWork struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec links this record to its ManifestWork on the hub.
	// +optional
	Spec AppliedManifestWorkSpec `json:"spec,omitempty"`

	// Status lists what was applied.
	// +optional
	Status AppliedManifestWorkStatus `json:"status,omitempty"`
}

// AppliedManifestWorkList is a list of AppliedManifestWorks.
//
// +kubebuilder:object:root=true
type AppliedManifestWorkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the AppliedManifestWorks.
	Items []AppliedManifestWork `json:"items"`
}

// AppliedManifestWorkSpec names the hub and the ManifestWork a record belongs to.
type AppliedManifestWorkSpec struct {
	// HubHash identifies the hub: the sha256 hex of its API server URL.
	// +required
	HubHash string `json:"hubHash"`

	// AgentID is the ID of the agent that handles this record.
	// +optional
	AgentID string `json:"agentID,omitempty"`

	// ManifestWorkName is the name of the ManifestWork on the hub.
	// +required
	ManifestWorkName string `json:"manifestWorkName"`
}

// AppliedManifestWorkStatus lists the objects a ManifestWork applied.
type AppliedManifestWorkStatus struct {
	// AppliedResources are the objects applied and not yet removed. An entry
	// goes when its manifest leaves the work and the object has been deleted.
	// +optional
	AppliedResources []AppliedManifestResourceMeta `json:"appliedResources,omitempty"`

	// EvictionStartTime is when the agent found the ManifestWork gone from the
	// hub (or the hub changed); the record is evicted after a grace period.
	// +optional
	EvictionStartTime *metav1.Time `json:"evictionStartTime,omitempty"`
}

// AppliedManifestResourceMeta identifies one applied object.
type AppliedManifestResourceMeta struct {
	ResourceIdentifier `json:",inline"`

	// Version is the API version the object was applied at.
	// +required
	Version string `json:"version"`

	// UID is the UID of the object, set by the agent once it deleted the
	// object; the object may linger until its finalizers finish.
	// +optional
	UID string `json:"uid,omitempty"`
}
