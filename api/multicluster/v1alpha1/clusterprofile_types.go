package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func init() { objects = append(objects, &ClusterProfile{}, &ClusterProfileList{}) }

const (
	// ClusterManagerLabel names, on every ClusterProfile, the cluster
	// manager that owns it (the same as spec.clusterManager.name).
	ClusterManagerLabel = "x-k8s.io/cluster-manager"

	// ConditionControlPlaneHealthy says whether the cluster's control plane
	// is healthy.
	ConditionControlPlaneHealthy = "ControlPlaneHealthy"
	// ConditionJoined says whether the cluster has joined its manager.
	ConditionJoined = "Joined"

	// ExecExtensionName names the Cluster extension whose content a
	// kubeconfig exec plugin receives as spec.cluster.config in
	// KUBERNETES_EXEC_INFO (provideClusterInfo).
	ExecExtensionName = "client.authentication.k8s.io/exec"
)

// ClusterProfile describes one member cluster of a fleet, as its cluster
// manager knows it (KEP-4322): who manages it, its health and version, its
// properties, and how to reach it (access providers, KEP-5339).
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:subresource:status
type ClusterProfile struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec names the cluster's manager.
	// +required
	Spec ClusterProfileSpec `json:"spec"`
	// status is what the manager observes of the cluster.
	// +optional
	Status ClusterProfileStatus `json:"status,omitempty"`
}

// ClusterProfileSpec is the desired state of a ClusterProfile.
type ClusterProfileSpec struct {
	// displayName is a name for people.
	// +optional
	DisplayName string `json:"displayName,omitempty"`
	// clusterManager names the manager that owns the profile; it never changes.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="ClusterManager is immutable"
	// +required
	ClusterManager ClusterManager `json:"clusterManager"`
}

// ClusterManager names a cluster manager.
type ClusterManager struct {
	// name is the cluster manager's name.
	// +required
	Name string `json:"name"`
}

// ClusterProfileStatus is the observed state of a ClusterProfile.
type ClusterProfileStatus struct {
	// conditions: ControlPlaneHealthy and Joined, among others.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// version holds the cluster's versions.
	// +optional
	Version ClusterVersion `json:"version,omitempty"`
	// properties are name/value facts about the cluster: ClusterProperties
	// (KEP-2149) and the manager's own.
	// +listType=map
	// +listMapKey=name
	// +optional
	Properties []Property `json:"properties,omitempty"`
	// accessProviders say how a consumer reaches the cluster, one per
	// provider name.
	// +listType=map
	// +listMapKey=name
	// +optional
	AccessProviders []AccessProvider `json:"accessProviders,omitempty"`
	// credentialProviders is the former name of accessProviders.
	//
	// Deprecated: use accessProviders.
	// +listType=map
	// +listMapKey=name
	// +optional
	CredentialProviders []AccessProvider `json:"credentialProviders,omitempty"`
}

// ClusterVersion holds a cluster's versions.
type ClusterVersion struct {
	// kubernetes is the cluster's Kubernetes version.
	// +optional
	Kubernetes string `json:"kubernetes,omitempty"`
}

// Property is one name/value fact about a cluster.
type Property struct {
	// name identifies the property: a well-known ClusterProperty name or
	// the manager's own.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
	// value is the property's value.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +required
	Value string `json:"value"`
	// lastObservedTime is when the property was last seen on the cluster
	// (not when the profile was written).
	// +optional
	LastObservedTime metav1.Time `json:"lastObservedTime,omitempty"`
}

// AccessProvider is one way of reaching a cluster: the provider's name, by
// which a consumer picks its credential plugin, and where to connect.
type AccessProvider struct {
	// name identifies the provider.
	// +required
	Name string `json:"name"`
	// cluster is where and how to connect, as a kubeconfig cluster entry.
	// +optional
	Cluster Cluster `json:"cluster,omitempty"`
}

// Cluster is a kubeconfig cluster entry (clientcmd v1's Cluster, with its
// field names), so that a consumer can put it into a kubeconfig as it is.
type Cluster struct {
	// server is the cluster's API address, https://host:port[/path].
	// +required
	Server string `json:"server"`
	// tls-server-name is the name checked against the server's certificate
	// instead of the host of server.
	// +optional
	TLSServerName string `json:"tls-server-name,omitempty"`
	// insecure-skip-tls-verify turns off the check of the server's
	// certificate.
	// +optional
	InsecureSkipTLSVerify bool `json:"insecure-skip-tls-verify,omitempty"`
	// certificate-authority is the path of a CA file.
	// +optional
	CertificateAuthority string `json:"certificate-authority,omitempty"`
	// certificate-authority-data is the PEM CA bundle that signed the
	// server's certificate.
	// +optional
	CertificateAuthorityData []byte `json:"certificate-authority-data,omitempty"`
	// proxy-url is an http, https or socks5 proxy for every request.
	// +optional
	ProxyURL string `json:"proxy-url,omitempty"`
	// disable-compression asks the server not to compress responses.
	// +optional
	DisableCompression bool `json:"disable-compression,omitempty"`
	// extensions carry what clients that know them read; the one named
	// client.authentication.k8s.io/exec goes to the exec plugin.
	// +optional
	Extensions []NamedExtension `json:"extensions,omitempty"`
}

// NamedExtension is a kubeconfig extension with its name.
type NamedExtension struct {
	// name is the extension's name.
	// +required
	Name string `json:"name"`
	// extension is the extension's content, any JSON object.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +required
	Extension runtime.RawExtension `json:"extension"`
}

// ClusterProfileList is a list of ClusterProfiles.
//
// +kubebuilder:object:root=true
type ClusterProfileList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the ClusterProfiles.
	Items []ClusterProfile `json:"items"`
}
