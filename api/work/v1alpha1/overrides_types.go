package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The types in this file are Flotilla extensions to ManifestWorkReplicaSet:
// OCM has no per-cluster variation of the template and no replica division.
// Both fields are optional, so an OCM ManifestWorkReplicaSet means the same
// thing here as there. docs/overrides.md describes them.

// ClusterOverride changes the template for the clusters it selects. The
// overrides of a replica set apply in list order, so a later one wins where
// two touch the same field.
type ClusterOverride struct {
	// Name identifies the override in status messages.
	// +optional
	Name string `json:"name,omitempty"`

	// ClusterNames selects clusters by name.
	// +optional
	ClusterNames []string `json:"clusterNames,omitempty"`

	// ClusterSelector selects clusters by their ManagedCluster labels. A
	// cluster is selected when it is named in clusterNames or matches this
	// selector; an override with neither selects no cluster.
	// +optional
	ClusterSelector *metav1.LabelSelector `json:"clusterSelector,omitempty"`

	// Target chooses the manifests changed; empty means every manifest the
	// change applies to (images and env: those with containers; replicas:
	// those with spec.replicas).
	// +optional
	Target *ManifestSelector `json:"target,omitempty"`

	// Images replaces container images.
	// +optional
	Images []ImageOverride `json:"images,omitempty"`

	// Replicas sets spec.replicas.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Env sets environment variables of containers, adding or replacing by name.
	// +optional
	Env []EnvOverride `json:"env,omitempty"`

	// Labels are added to metadata.labels, replacing values of the same keys.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// Annotations are added to metadata.annotations, replacing values of the same keys.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`

	// JSONPatch is an RFC 6902 patch applied to each targeted manifest after
	// the typed changes above.
	// +optional
	JSONPatch []JSONPatchOperation `json:"jsonPatch,omitempty"`
}

// ManifestSelector picks manifests of a template by kind and, optionally,
// apiVersion, namespace and name. Empty fields match anything.
type ManifestSelector struct {
	// APIVersion is the manifests' apiVersion, e.g. apps/v1.
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`

	// Kind is the manifests' kind, e.g. Deployment.
	// +optional
	Kind string `json:"kind,omitempty"`

	// Namespace is the manifests' metadata.namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Name is the manifests' metadata.name.
	// +optional
	Name string `json:"name,omitempty"`
}

// ImageOverride replaces the image of containers: the whole reference, or
// only its tag.
//
// +kubebuilder:validation:XValidation:rule="has(self.image) != has(self.tag)",message="set exactly one of image and tag"
type ImageOverride struct {
	// Container names the container (init containers included); empty means every container.
	// +optional
	Container string `json:"container,omitempty"`

	// Image is the new image reference, e.g. registry.eu.example.com/app:1.4.
	// +optional
	Image string `json:"image,omitempty"`

	// Tag replaces only the tag (or digest) of the current image, e.g. 1.4.
	// +optional
	Tag string `json:"tag,omitempty"`
}

// EnvOverride sets one environment variable.
type EnvOverride struct {
	// Container names the container (init containers included); empty means every container.
	// +optional
	Container string `json:"container,omitempty"`

	// Name is the variable's name.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`

	// Value is the variable's value.
	// +optional
	Value string `json:"value"`
}

// JSONPatchOperation is one operation of an RFC 6902 JSON patch.
type JSONPatchOperation struct {
	// Op is add, remove, replace, move, copy or test.
	// +kubebuilder:validation:Enum=add;remove;replace;move;copy;test
	// +required
	Op string `json:"op"`

	// Path is a JSON pointer into the manifest, e.g. /spec/template/spec/nodeSelector.
	// +required
	Path string `json:"path"`

	// From is the source pointer of move and copy.
	// +optional
	From string `json:"from,omitempty"`

	// Value is the value of add, replace and test: any JSON.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Value *runtime.RawExtension `json:"value,omitempty"`
}

// ReplicaDivision splits a total number of replicas across the chosen
// clusters, so that the fleet as a whole runs the total. The per-cluster
// numbers always sum to the total; when the limits make that impossible,
// the replica set reports it and leaves the ManifestWorks as they are.
type ReplicaDivision struct {
	// Target chooses the manifests whose spec.replicas is divided; empty
	// means every manifest of the template that has spec.replicas.
	// +optional
	Target *ManifestSelector `json:"target,omitempty"`

	// TotalReplicas is the number to divide; by default the targeted
	// manifest's own spec.replicas.
	// +kubebuilder:validation:Minimum=0
	// +optional
	TotalReplicas *int32 `json:"totalReplicas,omitempty"`

	// Type is Weighted (by the static weights below) or Allocatable (in
	// proportion to each cluster's allocatable resource, scaled by its weight).
	// +kubebuilder:default=Weighted
	// +optional
	Type ReplicaDivisionType `json:"type,omitempty"`

	// Resource is the allocatable resource of type Allocatable: cpu or memory.
	// +kubebuilder:validation:Enum=cpu;memory
	// +kubebuilder:default=cpu
	// +optional
	Resource string `json:"resource,omitempty"`

	// Weights give clusters their weight and limits. A cluster takes the
	// first entry that selects it; others weigh defaultWeight, unlimited.
	// +optional
	Weights []ClusterWeight `json:"weights,omitempty"`

	// DefaultWeight is the weight of clusters no entry selects.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=1
	// +optional
	DefaultWeight *int32 `json:"defaultWeight,omitempty"`
}

// ReplicaDivisionType names how replicas are divided.
//
// +kubebuilder:validation:Enum=Weighted;Allocatable
type ReplicaDivisionType string

// Replica division types.
const (
	// ReplicaDivisionWeighted divides by static weights.
	ReplicaDivisionWeighted ReplicaDivisionType = "Weighted"
	// ReplicaDivisionAllocatable divides by allocatable capacity times weight.
	ReplicaDivisionAllocatable ReplicaDivisionType = "Allocatable"
)

// ClusterWeight is the weight and limits of the clusters it selects.
type ClusterWeight struct {
	// ClusterNames selects clusters by name.
	// +optional
	ClusterNames []string `json:"clusterNames,omitempty"`

	// ClusterSelector selects clusters by their ManagedCluster labels. A
	// cluster is selected when it is named in clusterNames or matches this
	// selector; an entry with neither selects no cluster.
	// +optional
	ClusterSelector *metav1.LabelSelector `json:"clusterSelector,omitempty"`

	// Weight is the clusters' share relative to the others.
	// +kubebuilder:validation:Minimum=0
	// +required
	Weight int32 `json:"weight"`

	// MinReplicas is the fewest replicas each of these clusters gets.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinReplicas *int32 `json:"minReplicas,omitempty"`

	// MaxReplicas is the most replicas each of these clusters gets.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxReplicas *int32 `json:"maxReplicas,omitempty"`
}
