package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func init() {
	objects = append(objects, &SearchConfig{}, &SearchConfigList{})
}

// DefaultConfigName is the name of the one SearchConfig the hub reads.
const DefaultConfigName = "default"

// SearchConfig says which resource kinds the agents index. The hub reads
// the one named "default"; without it, agents index DefaultResources.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:validation:XValidation:rule="self.metadata.name == 'default'",message="the hub reads only the SearchConfig named default"
type SearchConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec lists what to index.
	// +required
	Spec SearchConfigSpec `json:"spec"`
}

// SearchConfigSpec lists the resources the agents index.
type SearchConfigSpec struct {
	// resources are the kinds every agent indexes, in place of the
	// defaults. An empty list indexes nothing.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	// +optional
	Resources []SearchResource `json:"resources,omitempty"`
}

// SearchResource is one resource kind to index.
type SearchResource struct {
	// group is the API group; empty for the core group.
	// +optional
	Group string `json:"group,omitempty"`
	// version is the API version the agent reads.
	// +required
	// +kubebuilder:validation:MinLength=1
	Version string `json:"version"`
	// resource is the plural resource name, e.g. deployments.
	// +required
	// +kubebuilder:validation:MinLength=1
	Resource string `json:"resource"`
	// kind is the resource's kind, e.g. Deployment.
	// +required
	// +kubebuilder:validation:MinLength=1
	Kind string `json:"kind"`
	// metadataOnly indexes the objects' metadata and nothing of their spec
	// or status (always so for Secrets).
	// +optional
	MetadataOnly bool `json:"metadataOnly,omitempty"`
}

// SearchConfigList is a list of SearchConfigs.
//
// +kubebuilder:object:root=true
type SearchConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SearchConfig `json:"items"`
}

// DefaultResources are what agents index without a SearchConfig.
var DefaultResources = []SearchResource{
	{Version: "v1", Resource: "pods", Kind: "Pod"},
	{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment"},
	{Group: "apps", Version: "v1", Resource: "statefulsets", Kind: "StatefulSet"},
	{Group: "apps", Version: "v1", Resource: "daemonsets", Kind: "DaemonSet"},
	{Group: "batch", Version: "v1", Resource: "jobs", Kind: "Job"},
	{Version: "v1", Resource: "services", Kind: "Service"},
	{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses", Kind: "Ingress"},
	{Version: "v1", Resource: "nodes", Kind: "Node"},
	{Version: "v1", Resource: "namespaces", Kind: "Namespace"},
	{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", MetadataOnly: true},
	{Version: "v1", Resource: "secrets", Kind: "Secret", MetadataOnly: true},
}

// Object is one indexed object of a managed cluster, compact: its
// identity, labels, controller and a few fields of its spec and status.
// It never holds a Secret's or ConfigMap's data, nor annotations.
type Object struct {
	// group, version, resource and kind of the object.
	Group    string `json:"group,omitempty"`
	Version  string `json:"version"`
	Resource string `json:"resource"`
	Kind     string `json:"kind"`

	Namespace string    `json:"namespace,omitempty"`
	Name      string    `json:"name"`
	UID       types.UID `json:"uid"`
	// resourceVersion is the object's version in its cluster; the hub
	// writes an object again only when it changes.
	ResourceVersion   string            `json:"resourceVersion"`
	CreationTimestamp metav1.Time       `json:"creationTimestamp,omitempty"`
	Labels            map[string]string `json:"labels,omitempty"`
	// owner is the object's controller (the owner reference with
	// controller true), if any.
	Owner *Owner `json:"owner,omitempty"`

	// images are the container images of a Pod or of a workload's pod
	// template, init containers included, as written.
	Images []string `json:"images,omitempty"`
	// status is a one-word summary, as kubectl prints it: a Pod's
	// CrashLoopBackOff, Running or Pending (a waiting or terminated
	// reason before the phase); a Deployment's Available or Progressing;
	// a Node's Ready or NotReady; a Namespace's phase.
	Status string `json:"status,omitempty"`
	// conditions are the object's status conditions, type to status.
	Conditions map[string]string `json:"conditions,omitempty"`
	// fields are selected fields by their path, for field selectors and
	// columns: spec.nodeName, status.podIP, spec.replicas,
	// status.readyReplicas, spec.type, ...
	Fields map[string]string `json:"fields,omitempty"`
}

// Owner is an object's controller.
type Owner struct {
	Kind string    `json:"kind"`
	Name string    `json:"name"`
	UID  types.UID `json:"uid,omitempty"`
}

// ObjectRef names an object of a cluster that was deleted.
type ObjectRef struct {
	Group    string    `json:"group,omitempty"`
	Resource string    `json:"resource"`
	UID      types.UID `json:"uid"`
}

// ChangeBatch is what an agent posts to
// /apis/search.flotilla.io/v1alpha1/ingest/<cluster>/changes: its
// cluster's objects created or changed, and deleted, since its last batch
// that the hub acknowledged. Applying a batch twice changes nothing.
type ChangeBatch struct {
	metav1.TypeMeta `json:",inline"`
	// seq numbers the agent's batches from 1 since it started.
	Seq int64 `json:"seq"`
	// upserts are objects created or changed.
	// +optional
	Upserts []Object `json:"upserts,omitempty"`
	// deletes are objects deleted.
	// +optional
	Deletes []ObjectRef `json:"deletes,omitempty"`
}

// ChangeAck is the hub's answer to a ChangeBatch it committed.
type ChangeAck struct {
	metav1.TypeMeta `json:",inline"`
	// seq is the batch's.
	Seq int64 `json:"seq"`
}

// ObjectVersions is the hub's answer to GET
// /apis/search.flotilla.io/v1alpha1/ingest/<cluster>/versions?group=&resource=:
// the version of every object of that resource the index holds for the
// cluster. An agent that starts compares it with what it lists and sends
// only the difference.
type ObjectVersions struct {
	metav1.TypeMeta `json:",inline"`
	Group           string `json:"group,omitempty"`
	Resource        string `json:"resource"`
	// versions maps an object's UID to its resourceVersion.
	Versions map[types.UID]string `json:"versions"`
}

// SearchResult is what a query of
// /apis/search.flotilla.io/v1alpha1/search returns.
type SearchResult struct {
	metav1.TypeMeta `json:",inline"`
	// metadata.continue asks for the next page.
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SearchItem `json:"items"`
}

// SearchItem is one object found, with its cluster.
type SearchItem struct {
	Cluster string `json:"cluster"`
	Object  `json:",inline"`
}
