package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func init() {
	objects = append(objects, &ExportedService{}, &ExportedServiceList{}, &ImportedService{}, &ImportedServiceList{})
}

// ServiceType is the type of a multi-cluster service, as in the
// ServiceImport of sigs.k8s.io/mcs-api.
// +kubebuilder:validation:Enum=ClusterSetIP;Headless
type ServiceType string

const (
	// ClusterSetIP services get a cluster-set IP in every importing cluster.
	ClusterSetIP ServiceType = "ClusterSetIP"
	// Headless services resolve to their endpoints.
	Headless ServiceType = "Headless"
)

const (
	// ConditionConflict on an ExportedService is the hub's verdict on the
	// export against the set's other exports of the same service: True with
	// the KEP's reasons (PortConflict, TypeConflict, ...) joined by commas,
	// or False with reason NoConflicts. The agent copies it onto the
	// cluster's ServiceExport.
	ConditionConflict = "Conflict"
	// ConditionInClusterSet on an ExportedService says whether the hub
	// imports it into a cluster set: False with reason NotInClusterSet when
	// the cluster is a member of no exclusive ManagedClusterSet.
	ConditionInClusterSet = "InClusterSet"
)

// ExportedService is one service a managed cluster exports: its
// ServiceExport, the Service's properties and the cluster's endpoints for
// it. The cluster's agent writes it in the cluster's namespace on the hub,
// named <namespace>.<name> of the Service; the hub writes its status.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=exsvc
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Namespace",type=string,JSONPath=`.spec.namespace`
// +kubebuilder:printcolumn:name="Service",type=string,JSONPath=`.spec.name`
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name == self.spec.__namespace__ + '.' + self.spec.name",message="metadata.name must be <spec.namespace>.<spec.name>"
type ExportedService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is what the cluster exports.
	// +required
	Spec ExportedServiceSpec `json:"spec"`
	// status is the hub's verdict.
	// +optional
	Status ExportedServiceStatus `json:"status,omitempty"`
}

// ExportedServiceSpec is one cluster's export of one Service.
type ExportedServiceSpec struct {
	// namespace is the Service's namespace in the cluster.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +required
	Namespace string `json:"namespace"`
	// name is the Service's name.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	// +required
	Name string `json:"name"`
	// exportCreationTimestamp is the creationTimestamp of the ServiceExport
	// in the cluster: where exports conflict, the oldest wins.
	// +required
	ExportCreationTimestamp metav1.Time `json:"exportCreationTimestamp"`
	// ServiceProperties are the Service's properties that every export of
	// the service must agree on.
	ServiceProperties `json:",inline"`
	// endpoints are the cluster's endpoints of the Service, ready or not,
	// grouped by address type, ports and zone.
	// +kubebuilder:validation:MaxItems=1000
	// +listType=atomic
	// +optional
	Endpoints []EndpointGroup `json:"endpoints,omitempty"`
}

// ServiceProperties are the properties of a multi-cluster service that
// every export must agree on (KEP-1645 conflict resolution).
type ServiceProperties struct {
	// type is ClusterSetIP for ClusterIP, NodePort and LoadBalancer
	// Services, Headless for clusterIP: None.
	// +required
	Type ServiceType `json:"type"`
	// ports are the Service's ports.
	// +kubebuilder:validation:MaxItems=100
	// +listType=atomic
	// +optional
	Ports []ServicePort `json:"ports,omitempty"`
	// sessionAffinity is the Service's session affinity.
	// +optional
	SessionAffinity corev1.ServiceAffinity `json:"sessionAffinity,omitempty"`
	// sessionAffinityConfig is the Service's session affinity configuration.
	// +optional
	SessionAffinityConfig *corev1.SessionAffinityConfig `json:"sessionAffinityConfig,omitempty"`
	// internalTrafficPolicy is the Service's internal traffic policy.
	// +optional
	InternalTrafficPolicy *corev1.ServiceInternalTrafficPolicy `json:"internalTrafficPolicy,omitempty"`
	// trafficDistribution is the Service's traffic distribution.
	// +optional
	TrafficDistribution *string `json:"trafficDistribution,omitempty"`
	// ipFamilies are the Service's IP families.
	// +kubebuilder:validation:MaxItems=2
	// +listType=atomic
	// +optional
	IPFamilies []corev1.IPFamily `json:"ipFamilies,omitempty"`
	// exportedLabels are the ServiceExport's spec.exportedLabels.
	// +optional
	ExportedLabels map[string]string `json:"exportedLabels,omitempty"`
	// exportedAnnotations are the ServiceExport's spec.exportedAnnotations.
	// +optional
	ExportedAnnotations map[string]string `json:"exportedAnnotations,omitempty"`
}

// ServicePort is a port of a multi-cluster service.
type ServicePort struct {
	// name is the port's name; empty only for a Service's single port.
	// +optional
	Name string `json:"name,omitempty"`
	// protocol is TCP, UDP or SCTP.
	// +kubebuilder:default=TCP
	// +optional
	Protocol corev1.Protocol `json:"protocol,omitempty"`
	// appProtocol is the port's application protocol.
	// +optional
	AppProtocol *string `json:"appProtocol,omitempty"`
	// port is the port number.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +required
	Port int32 `json:"port"`
}

// EndpointGroup is endpoints of one cluster that share an address type,
// ports and zone, as an EndpointSlice holds them (with no limit on how
// many). Most endpoints are ready, with one address and no hostname:
// ready lists those by their address alone, one string each, and
// endpoints holds the others in full. The hub keeps every version of
// these objects in its watch caches, so the common endpoint costs it one
// string rather than an object of addresses and conditions.
type EndpointGroup struct {
	// addressType is IPv4 or IPv6.
	// +required
	AddressType discoveryv1.AddressType `json:"addressType"`
	// ports are the endpoints' ports.
	// +listType=atomic
	// +optional
	Ports []discoveryv1.EndpointPort `json:"ports,omitempty"`
	// zone is the zone of the group's endpoints; empty when they name none.
	// +optional
	Zone string `json:"zone,omitempty"`
	// ready are the endpoints that are ready and serving, not terminating,
	// with one address and no hostname, by that address: each stands for
	// an endpoint with conditions ready, serving true and terminating false.
	// +kubebuilder:validation:MaxItems=10000
	// +listType=atomic
	// +optional
	Ready []string `json:"ready,omitempty"`
	// endpoints are the group's other endpoints, in full.
	// +kubebuilder:validation:MaxItems=10000
	// +listType=atomic
	// +optional
	Endpoints []Endpoint `json:"endpoints,omitempty"`
}

// Endpoint is one endpoint of a Service that does not fit its group's
// ready list: not ready, not serving or terminating, with more than one
// address, or with a hostname.
type Endpoint struct {
	// addresses are the endpoint's addresses, of the group's address type.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	// +listType=set
	// +required
	Addresses []string `json:"addresses"`
	// conditions are the endpoint's ready, serving and terminating.
	// +optional
	Conditions discoveryv1.EndpointConditions `json:"conditions,omitempty"`
	// hostname is the endpoint's hostname (StatefulSet pods have one).
	// +optional
	Hostname *string `json:"hostname,omitempty"`
}

// ExportedServiceStatus is the hub's verdict on an export.
type ExportedServiceStatus struct {
	// clusterSet is the cluster set the service is imported into; empty
	// when the cluster is in none.
	// +optional
	ClusterSet string `json:"clusterSet,omitempty"`
	// conditions are Conflict and InClusterSet.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ExportedServiceList is a list of ExportedServices.
//
// +kubebuilder:object:root=true
type ExportedServiceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ExportedService `json:"items"`
}

// ImportedService is one multi-cluster service of a cluster set: the merge
// of every member's export of a namespace and name. The hub writes it in
// the set's namespace, named <namespace>.<name>; every member's agent reads
// it and writes the cluster's ServiceImport and EndpointSlices from it.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=imsvc
// +kubebuilder:printcolumn:name="Namespace",type=string,JSONPath=`.spec.namespace`
// +kubebuilder:printcolumn:name="Service",type=string,JSONPath=`.spec.name`
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ImportedService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the merged service.
	// +required
	Spec ImportedServiceSpec `json:"spec"`
}

// ImportedServiceSpec is a merged multi-cluster service.
type ImportedServiceSpec struct {
	// clusterSet is the ManagedClusterSet the service belongs to.
	// +required
	ClusterSet string `json:"clusterSet"`
	// namespace is the service's namespace in every member cluster.
	// +required
	Namespace string `json:"namespace"`
	// name is the service's name.
	// +required
	Name string `json:"name"`
	// ServiceProperties are the merged properties: the union of the ports,
	// every other property from the oldest export.
	ServiceProperties `json:",inline"`
	// clusters are the exporting clusters, sorted by name, each once, with
	// their endpoints. Atomic: the hub writes the list whole, and a list
	// map would cost every version of every ImportedService kept in the
	// hub's watch caches managed fields per exporting cluster.
	// +listType=atomic
	// +optional
	Clusters []ImportedCluster `json:"clusters,omitempty"`
}

// ImportedCluster is one exporting cluster of a multi-cluster service.
type ImportedCluster struct {
	// name is the cluster's name, which is its cluster ID in the set.
	// +required
	Name string `json:"name"`
	// generation is the generation of the cluster's ExportedService merged here.
	// +optional
	Generation int64 `json:"generation,omitempty"`
	// available is false while the hub has lost the cluster's lease; its
	// endpoints are then left out.
	// +optional
	Available bool `json:"available,omitempty"`
	// endpoints are the cluster's endpoints, as in its ExportedService.
	// +listType=atomic
	// +optional
	Endpoints []EndpointGroup `json:"endpoints,omitempty"`
}

// ImportedServiceList is a list of ImportedServices.
//
// +kubebuilder:object:root=true
type ImportedServiceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ImportedService `json:"items"`
}
