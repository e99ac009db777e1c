package v1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func init() { objects = append(objects, &ManagedCluster{}, &ManagedClusterList{}) }

// ManagedCluster is a cluster registered with the hub; its name is the cluster name.
//
// Joining is a double opt-in: the agent creates the ManagedCluster and a CSR,
// and a hub admin approves the CSR and sets spec.hubAcceptsClient.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName={mcl,mcls}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Hub Accepted",type=boolean,JSONPath=`.spec.hubAcceptsClient`
// +kubebuilder:printcolumn:name="Managed Cluster URLs",type=string,JSONPath=`.spec.managedClusterClientConfigs[*].url`
// +kubebuilder:printcolumn:name="Joined",type=string,JSONPath=`.status.conditions[?(@.type=="ManagedClusterJoined")].status`
// +kubebuilder:printcolumn:name="Available",type=string,JSONPath=`.status.conditions[?(@.type=="ManagedClusterConditionAvailable")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ManagedCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired configuration of the agent on the managed cluster.
	// +optional
	Spec ManagedClusterSpec `json:"spec,omitempty"`

	// status is the current state of the joined managed cluster.
	// +optional
	Status ManagedClusterStatus `json:"status,omitempty"`
}

// ManagedClusterSpec is the desired configuration of a managed cluster.
type ManagedClusterSpec struct {
	// managedClusterClientConfigs lists the API server addresses of the managed
	// cluster; empty means the hub cannot reach it.
	// +optional
	ManagedClusterClientConfigs []ClientConfig `json:"managedClusterClientConfigs,omitempty"`

	// hubAcceptsClient admits the cluster's agent to the hub. Setting it to true
	// requires update on the virtual subresource managedclusters/accept; the hub
	// then creates the cluster namespace and the agent's RBAC, and removes them
	// again when it is set back to false.
	// +optional
	HubAcceptsClient bool `json:"hubAcceptsClient"`

	// leaseDurationSeconds is how often the agent renews its lease on the hub;
	// zero means 60.
	// +kubebuilder:default=60
	// +optional
	LeaseDurationSeconds int32 `json:"leaseDurationSeconds,omitempty"`

	// taints repel placements that do not tolerate them. The agent may not add
	// or remove the unavailable and unreachable taints, which the hub owns.
	// +optional
	Taints []Taint `json:"taints,omitempty"`
}

// ClientConfig is one API server address of a managed cluster.
type ClientConfig struct {
	// url is the URL of the managed cluster's API server.
	// +required
	URL string `json:"url"`

	// caBundle is the CA bundle that verifies the API server; system roots are
	// used when it is empty.
	// +optional
	CABundle []byte `json:"caBundle,omitempty"`
}

// Taint repels from a managed cluster every placement that does not tolerate it.
type Taint struct {
	// key is the taint key, e.g. bar or foo.example.com/bar.
	// +kubebuilder:validation:MaxLength=316
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$`
	// +required
	Key string `json:"key"`

	// value is the taint value for the key.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Value string `json:"value,omitempty"`

	// effect is what the taint does to placements that do not tolerate it.
	// +required
	Effect TaintEffect `json:"effect"`

	// timeAdded is when the taint was added.
	// +nullable
	// +optional
	TimeAdded metav1.Time `json:"timeAdded"`
}

// TaintEffect is the effect of a taint on placements that do not tolerate it.
// +kubebuilder:validation:Enum=NoSelect;PreferNoSelect;NoSelectIfNew
type TaintEffect string

const (
	// TaintEffectNoSelect keeps placements from selecting the cluster, and
	// removes it from their decisions.
	TaintEffectNoSelect TaintEffect = "NoSelect"
	// TaintEffectPreferNoSelect makes placements avoid the cluster when they can.
	TaintEffectPreferNoSelect TaintEffect = "PreferNoSelect"
	// TaintEffectNoSelectIfNew keeps placements from newly selecting the
	// cluster; placements that already selected it keep it.
	TaintEffectNoSelectIfNew TaintEffect = "NoSelectIfNew"
)

// ManagedClusterStatus is the observed state of a managed cluster.
type ManagedClusterStatus struct {
	// conditions hold the cluster's status conditions, keyed by type.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// capacity is the total resource capacity over all nodes of the cluster.
	// +optional
	Capacity ResourceList `json:"capacity,omitempty"`

	// allocatable is the total allocatable resources over all nodes of the cluster.
	// +optional
	Allocatable ResourceList `json:"allocatable,omitempty"`

	// version is the Kubernetes version of the cluster.
	// +optional
	Version ManagedClusterVersion `json:"version,omitempty"`

	// clusterClaims are the ClusterClaims found on the managed cluster.
	// +optional
	ClusterClaims []ManagedClusterClaim `json:"clusterClaims,omitempty"`

	// managedNamespaces are the namespaces managed by the cluster sets that the
	// cluster belongs to.
	// +listType=map
	// +listMapKey=clusterSet
	// +listMapKey=name
	// +optional
	ManagedNamespaces []ClusterSetManagedNamespaceConfig `json:"managedNamespaces,omitempty"`
}

// ResourceName is the name of a resource reported in capacity or allocatable.
type ResourceName string

// ResourceList maps resource names to quantities.
type ResourceList map[ResourceName]resource.Quantity

// ManagedClusterVersion holds the versions reported by a managed cluster.
type ManagedClusterVersion struct {
	// kubernetes is the Kubernetes version of the cluster.
	// +optional
	Kubernetes string `json:"kubernetes,omitempty"`
}

// ManagedClusterClaim is a ClusterClaim as reported in the ManagedCluster status.
type ManagedClusterClaim struct {
	// name is the name of the ClusterClaim on the managed cluster.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Name string `json:"name,omitempty"`

	// value is the claimed value.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Value string `json:"value,omitempty"`
}

// ManagedNamespaceConfig names a namespace that a cluster set manages on its clusters.
type ManagedNamespaceConfig struct {
	// name is the name of the namespace.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +required
	Name string `json:"name"`
}

// ClusterSetManagedNamespaceConfig is a managed namespace with the cluster set
// that asks for it and its state on the cluster.
type ClusterSetManagedNamespaceConfig struct {
	ManagedNamespaceConfig `json:",inline"`

	// clusterSet is the name of the cluster set that manages the namespace.
	// +required
	ClusterSet string `json:"clusterSet"`

	// conditions are the status conditions of the namespace on the cluster.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ManagedClusterList is a list of ManagedClusters.
//
// +kubebuilder:object:root=true
type ManagedClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the ManagedClusters.
	Items []ManagedCluster `json:"items"`
}
