package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func init() { objects = append(objects, &AddOnDeploymentConfig{}, &AddOnDeploymentConfigList{}) }

// AddOnDeploymentConfig configures how an add-on's agent is deployed on
// managed clusters: variables, node placement, image mirrors, proxy,
// namespace and resources. Add-ons name it in their configs.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:storageversion
type AddOnDeploymentConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the deployment configuration.
	// +required
	Spec AddOnDeploymentConfigSpec `json:"spec"`
}

// AddOnDeploymentConfigList is a list of AddOnDeploymentConfigs.
//
// +kubebuilder:object:root=true
type AddOnDeploymentConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the AddOnDeploymentConfigs.
	Items []AddOnDeploymentConfig `json:"items"`
}

// AddOnDeploymentConfigSpec is how an add-on's agent is deployed.
type AddOnDeploymentConfigSpec struct {
	// CustomizedVariables are name/value pairs the add-on's templates use.
	// +listType=map
	// +listMapKey=name
	// +optional
	CustomizedVariables []CustomizedVariable `json:"customizedVariables,omitempty"`

	// NodePlacement places the add-on's agent on managed clusters' nodes.
	// +optional
	NodePlacement *NodePlacement `json:"nodePlacement,omitempty"`

	// Registries mirror image registries for the add-on's images.
	// +optional
	Registries []ImageMirror `json:"registries,omitempty"`

	// ProxyConfig is the HTTP proxy the add-on's agent uses.
	// +optional
	ProxyConfig ProxyConfig `json:"proxyConfig,omitzero"`

	// AgentInstallNamespace is the namespace of the add-on's agent on the
	// managed cluster.
	// +kubebuilder:default=open-cluster-management-agent-addon
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$`
	// +optional
	AgentInstallNamespace string `json:"agentInstallNamespace,omitempty"`

	// ResourceRequirements set the resources of the add-on's containers.
	// +listType=map
	// +listMapKey=containerID
	// +optional
	ResourceRequirements []ContainerResourceRequirements `json:"resourceRequirements,omitempty"`
}

// CustomizedVariable is a name/value pair.
type CustomizedVariable struct {
	// Name is the variable's name.
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^[a-zA-Z_][_a-zA-Z0-9]*$`
	// +required
	Name string `json:"name"`

	// Value is the variable's value.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Value string `json:"value,omitempty"`
}

// NodePlacement places pods on nodes.
type NodePlacement struct {
	// NodeSelector selects nodes by label.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Tolerations are the pods' tolerations.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}

// ImageMirror maps a source registry to a mirror.
type ImageMirror struct {
	// Mirror is the registry that serves the images.
	// +required
	Mirror string `json:"mirror"`

	// Source is the registry the images are named with.
	// +optional
	Source string `json:"source,omitempty"`
}

// ProxyConfig is an HTTP proxy.
type ProxyConfig struct {
	// HTTPProxy is the proxy for http:// URLs.
	// +optional
	HTTPProxy string `json:"httpProxy,omitempty"`

	// HTTPSProxy is the proxy for https:// URLs.
	// +optional
	HTTPSProxy string `json:"httpsProxy,omitempty"`

	// CABundle is the PEM CA bundle that verifies an https proxy.
	// +optional
	CABundle []byte `json:"caBundle,omitempty"`

	// NoProxy lists hosts reached without the proxy.
	// +optional
	NoProxy string `json:"noProxy,omitempty"`
}

// ContainerResourceRequirements are the resources of some containers.
type ContainerResourceRequirements struct {
	// ContainerID selects containers as <resource>:<name>:<container>, each
	// part may be *, e.g. deployments:*:manager.
	// +kubebuilder:validation:Pattern=`^(deployments|daemonsets|statefulsets|replicasets|jobs|cronjobs|pods|\*):.+:.+$`
	// +required
	ContainerID string `json:"containerID"`

	// Resources are the requests and limits.
	// +required
	Resources corev1.ResourceRequirements `json:"resources"`
}
