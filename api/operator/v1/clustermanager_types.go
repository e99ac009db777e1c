package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func init() { objects = append(objects, &ClusterManager{}, &ClusterManagerList{}) }

// ClusterManager describes a hub. In OCM it configures the hub's
// components; a Flotilla hub reads no field of its spec (its components
// are configured by flotilla-hub's flags) and reports in its status.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:subresource:status
type ClusterManager struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec configures the hub (OCM's operator); Flotilla keeps it as given.
	// +kubebuilder:default={deployOption: {mode: Default}}
	// +optional
	Spec ClusterManagerSpec `json:"spec,omitzero"`

	// Status reports the hub.
	// +optional
	Status ClusterManagerStatus `json:"status,omitzero"`
}

// ClusterManagerList is a list of ClusterManagers.
//
// +kubebuilder:object:root=true
type ClusterManagerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the ClusterManagers.
	Items []ClusterManager `json:"items"`
}

// ClusterManagerSpec configures an OCM hub's components.
type ClusterManagerSpec struct {
	// RegistrationImagePullSpec is the registration controller's image.
	// +kubebuilder:default=quay.io/open-cluster-management/registration
	// +optional
	RegistrationImagePullSpec string `json:"registrationImagePullSpec,omitempty"`

	// WorkImagePullSpec is the work controller's image.
	// +kubebuilder:default=quay.io/open-cluster-management/work
	// +optional
	WorkImagePullSpec string `json:"workImagePullSpec,omitempty"`

	// PlacementImagePullSpec is the placement controller's image.
	// +kubebuilder:default=quay.io/open-cluster-management/placement
	// +optional
	PlacementImagePullSpec string `json:"placementImagePullSpec,omitempty"`

	// AddOnManagerImagePullSpec is the add-on manager's image.
	// +kubebuilder:default=quay.io/open-cluster-management/addon-manager
	// +optional
	AddOnManagerImagePullSpec string `json:"addOnManagerImagePullSpec,omitempty"`

	// NodePlacement places the hub's pods on nodes.
	// +optional
	NodePlacement NodePlacement `json:"nodePlacement,omitzero"`

	// DeployOption is how the hub is deployed.
	// +kubebuilder:default={mode: Default}
	// +optional
	DeployOption ClusterManagerDeployOption `json:"deployOption,omitzero"`

	// RegistrationConfiguration configures registration.
	// +optional
	RegistrationConfiguration *RegistrationHubConfiguration `json:"registrationConfiguration,omitempty"`

	// WorkConfiguration configures work.
	// +kubebuilder:default={workDriver: kube}
	// +optional
	WorkConfiguration *WorkConfiguration `json:"workConfiguration,omitempty"`

	// AddOnManagerConfiguration configures the add-on manager.
	// +optional
	AddOnManagerConfiguration *AddOnManagerConfiguration `json:"addOnManagerConfiguration,omitempty"`

	// PlacementConfiguration configures placement.
	// +optional
	PlacementConfiguration *PlacementConfiguration `json:"placementConfiguration,omitempty"`

	// ServerConfiguration configures the gRPC server.
	// +optional
	ServerConfiguration *ServerConfiguration `json:"serverConfiguration,omitempty"`

	// ResourceRequirement sets the resources of the hub's containers.
	// +optional
	ResourceRequirement *ResourceRequirement `json:"resourceRequirement,omitempty"`
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

// FeatureGate turns a feature on or off.
type FeatureGate struct {
	// Feature is the feature's name.
	// +required
	Feature string `json:"feature"`

	// Mode is Enable or Disable.
	// +kubebuilder:validation:Enum=Enable;Disable
	// +kubebuilder:default=Disable
	// +optional
	Mode string `json:"mode,omitempty"`
}

// RegistrationHubConfiguration configures registration.
type RegistrationHubConfiguration struct {
	// AutoApproveUsers may join without a hub admin accepting them.
	// +optional
	AutoApproveUsers []string `json:"autoApproveUsers,omitempty"`

	// FeatureGates turn registration features on or off.
	// +optional
	FeatureGates []FeatureGate `json:"featureGates,omitempty"`

	// RegistrationDrivers are the ways clusters authenticate.
	// +listType=map
	// +listMapKey=authType
	// +optional
	RegistrationDrivers []RegistrationDriverHub `json:"registrationDrivers,omitempty"`

	// ImporterConfiguration configures the cluster importer.
	// +optional
	ImporterConfiguration ImporterConfiguration `json:"importerConfiguration,omitzero"`
}

// ImporterConfiguration configures the cluster importer.
type ImporterConfiguration struct {
	// Renderers render the import manifests.
	// +optional
	Renderers []string `json:"renderers,omitempty"`
}

// RegistrationDriverHub is one way clusters authenticate.
type RegistrationDriverHub struct {
	// AuthType is csr, awsirsa or grpc.
	// +kubebuilder:validation:Enum=csr;awsirsa;grpc
	// +kubebuilder:default=csr
	// +required
	AuthType string `json:"authType"`

	// CSR configures authType csr.
	// +optional
	CSR *CSRConfig `json:"csr,omitempty"`

	// AwsIrsa configures authType awsirsa.
	// +optional
	AwsIrsa *AwsIrsaConfig `json:"awsirsa,omitempty"`

	// GRPC configures authType grpc.
	// +optional
	GRPC *GRPCRegistrationConfig `json:"grpc,omitempty"`
}

// CSRConfig configures registration by CSR.
type CSRConfig struct {
	// AutoApprovedIdentities may join without a hub admin accepting them.
	// +optional
	AutoApprovedIdentities []string `json:"autoApprovedIdentities,omitempty"`
}

// AwsIrsaConfig configures registration by AWS IAM roles.
type AwsIrsaConfig struct {
	// HubClusterArn is the hub's EKS cluster ARN.
	// +kubebuilder:validation:Pattern=`^arn:aws:eks:([a-zA-Z0-9-]+):(\d{12}):cluster/([a-zA-Z0-9-]+)$`
	// +optional
	HubClusterArn string `json:"hubClusterArn,omitempty"`

	// AutoApprovedIdentities may join without a hub admin accepting them.
	// +optional
	AutoApprovedIdentities []string `json:"autoApprovedIdentities,omitempty"`

	// Tags are put on the roles created.
	// +optional
	Tags []string `json:"tags,omitempty"`
}

// GRPCRegistrationConfig configures registration over gRPC.
type GRPCRegistrationConfig struct {
	// AutoApprovedIdentities may join without a hub admin accepting them.
	// +optional
	AutoApprovedIdentities []string `json:"autoApprovedIdentities,omitempty"`
}

// WorkConfiguration configures work.
type WorkConfiguration struct {
	// FeatureGates turn work features on or off.
	// +optional
	FeatureGates []FeatureGate `json:"featureGates,omitempty"`

	// WorkDriver is how works reach agents: kube, mqtt or grpc.
	// +kubebuilder:validation:Enum=kube;mqtt;grpc
	// +kubebuilder:default=kube
	// +optional
	WorkDriver string `json:"workDriver,omitempty"`
}

// AddOnManagerConfiguration configures the add-on manager.
type AddOnManagerConfiguration struct {
	// FeatureGates turn add-on manager features on or off.
	// +optional
	FeatureGates []FeatureGate `json:"featureGates,omitempty"`
}

// PlacementConfiguration configures placement.
type PlacementConfiguration struct {
	// FeatureGates turn placement features on or off.
	// +optional
	FeatureGates []FeatureGate `json:"featureGates,omitempty"`
}

// ServerConfiguration configures the gRPC server.
type ServerConfiguration struct {
	// ImagePullSpec is the server's image.
	// +optional
	ImagePullSpec string `json:"imagePullSpec,omitempty"`

	// FeatureGates turn server features on or off.
	// +optional
	FeatureGates []FeatureGate `json:"featureGates,omitempty"`

	// EndpointsExposure say how the server is reached.
	// +optional
	EndpointsExposure []EndpointExposure `json:"endpointsExposure,omitempty"`
}

// EndpointExposure is how one protocol of the server is reached.
type EndpointExposure struct {
	// Protocol is grpc or https.
	// +kubebuilder:validation:Enum=grpc;https
	// +kubebuilder:default=grpc
	// +required
	Protocol string `json:"protocol"`

	// Usage says what the endpoint is for.
	// +optional
	Usage string `json:"usage,omitempty"`

	// GRPC is the gRPC endpoint.
	// +optional
	GRPC *Endpoint `json:"grpc,omitempty"`

	// HTTPS is the https endpoint.
	// +optional
	HTTPS *Endpoint `json:"https,omitempty"`
}

// Endpoint is how an endpoint is exposed.
type Endpoint struct {
	// Type is hostname, loadBalancer or route.
	// +kubebuilder:validation:Enum=hostname;loadBalancer;route
	// +kubebuilder:default=hostname
	// +required
	Type string `json:"type"`

	// Hostname configures type hostname.
	// +optional
	Hostname *HostnameConfig `json:"hostname,omitempty"`

	// LoadBalancer configures type loadBalancer.
	// +optional
	LoadBalancer *HostConfig `json:"loadBalancer,omitempty"`

	// Route configures type route.
	// +optional
	Route *HostConfig `json:"route,omitempty"`
}

// HostnameConfig is an endpoint's host name and CA.
type HostnameConfig struct {
	// Host is the host name.
	// +required
	Host string `json:"host"`

	// CABundle is the PEM CA bundle that verifies the endpoint.
	// +optional
	CABundle []byte `json:"caBundle,omitempty"`
}

// HostConfig is an endpoint's optional host name and CA.
type HostConfig struct {
	// Host is the host name.
	// +optional
	Host string `json:"host,omitempty"`

	// CABundle is the PEM CA bundle that verifies the endpoint.
	// +optional
	CABundle []byte `json:"caBundle,omitempty"`
}

// ResourceRequirement sets the resources of the hub's containers.
type ResourceRequirement struct {
	// Type is Default, BestEffort or ResourceRequirement.
	// +kubebuilder:validation:Enum=Default;BestEffort;ResourceRequirement
	// +kubebuilder:default=Default
	// +optional
	Type string `json:"type,omitempty"`

	// ResourceRequirements are the requests and limits for type ResourceRequirement.
	// +optional
	ResourceRequirements *corev1.ResourceRequirements `json:"resourceRequirements,omitempty"`
}

// ClusterManagerDeployOption is how a hub is deployed.
type ClusterManagerDeployOption struct {
	// Mode is Default (on the cluster it manages) or Hosted (elsewhere).
	// +kubebuilder:validation:Enum=Default;Hosted
	// +kubebuilder:default=Default
	// +required
	Mode string `json:"mode"`

	// Default configures mode Default.
	// +optional
	Default *DefaultClusterManagerConfiguration `json:"default,omitempty"`

	// Hosted configures mode Hosted.
	// +optional
	Hosted *HostedClusterManagerConfiguration `json:"hosted,omitempty"`
}

// Deploy modes.
const (
	// InstallModeDefault runs the hub on the cluster it serves.
	InstallModeDefault = "Default"
	// InstallModeHosted runs the hub elsewhere.
	InstallModeHosted = "Hosted"
)

// DefaultClusterManagerConfiguration configures the webhooks of mode Default.
type DefaultClusterManagerConfiguration struct {
	// RegistrationWebhookConfiguration configures the registration webhook.
	// +optional
	RegistrationWebhookConfiguration DefaultWebhookConfiguration `json:"registrationWebhookConfiguration,omitzero"`

	// WorkWebhookConfiguration configures the work webhook.
	// +optional
	WorkWebhookConfiguration DefaultWebhookConfiguration `json:"workWebhookConfiguration,omitzero"`

	// AddOnWebhookConfiguration configures the add-on webhook.
	// +optional
	AddOnWebhookConfiguration DefaultWebhookConfiguration `json:"addonWebhookConfiguration,omitzero"`
}

// HostedClusterManagerConfiguration configures the webhooks of mode Hosted.
type HostedClusterManagerConfiguration struct {
	// RegistrationWebhookConfiguration configures the registration webhook.
	// +optional
	RegistrationWebhookConfiguration HostedWebhookConfiguration `json:"registrationWebhookConfiguration,omitzero"`

	// WorkWebhookConfiguration configures the work webhook.
	// +optional
	WorkWebhookConfiguration HostedWebhookConfiguration `json:"workWebhookConfiguration,omitzero"`
}

// DefaultWebhookConfiguration is where a webhook listens.
type DefaultWebhookConfiguration struct {
	// BindConfiguration is where the webhook listens.
	// +optional
	BindConfiguration BindConfiguration `json:"bindConfiguration,omitzero"`
}

// HostedWebhookConfiguration is where a hosted webhook listens and is reached.
type HostedWebhookConfiguration struct {
	// Address is the host name the API server reaches the webhook at.
	// +kubebuilder:validation:Pattern=`^(([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9\-]*[a-zA-Z0-9])\.)*([A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9\-]*[A-Za-z0-9])$`
	// +required
	Address string `json:"address"`

	// Port is the port the API server reaches the webhook at.
	// +kubebuilder:default=443
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Port int32 `json:"port,omitempty"`

	// BindConfiguration is where the webhook listens.
	// +optional
	BindConfiguration BindConfiguration `json:"bindConfiguration,omitzero"`
}

// BindConfiguration is where a webhook server listens.
type BindConfiguration struct {
	// Port serves the webhook.
	// +kubebuilder:default=9443
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Port int32 `json:"port,omitempty"`

	// HealthProbePort serves the health probes.
	// +kubebuilder:default=8000
	// +kubebuilder:validation:Maximum=65535
	// +optional
	HealthProbePort int32 `json:"healthProbePort,omitempty"`

	// MetricsPort serves the metrics.
	// +kubebuilder:default=8080
	// +kubebuilder:validation:Maximum=65535
	// +optional
	MetricsPort int32 `json:"metricsPort,omitempty"`

	// HostNetwork runs the webhook in the host's network.
	// +optional
	HostNetwork bool `json:"hostNetwork,omitempty"`
}

// ClusterManagerStatus reports a hub.
type ClusterManagerStatus struct {
	// ObservedGeneration is the spec generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions describe the hub: Applied, Progressing,
	// HubRegistrationDegraded and the like.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Generations are the generations of the objects the hub keeps.
	// +optional
	Generations []GenerationStatus `json:"generations,omitempty"`

	// RelatedResources are the objects that make up the hub.
	// +optional
	RelatedResources []RelatedResourceMeta `json:"relatedResources,omitempty"`
}

// GenerationStatus is the generation of an object the hub keeps.
type GenerationStatus struct {
	// Group is the object's API group.
	// +required
	Group string `json:"group"`

	// Version is the object's API version.
	// +required
	Version string `json:"version"`

	// Resource is the object's plural resource name.
	// +required
	Resource string `json:"resource"`

	// Namespace is the object's namespace, if namespaced.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Name is the object's name.
	// +required
	Name string `json:"name"`

	// LastGeneration is the object's generation last written.
	// +required
	LastGeneration int64 `json:"lastGeneration"`
}

// RelatedResourceMeta names an object that makes up the hub.
type RelatedResourceMeta struct {
	// Group is the object's API group.
	// +required
	Group string `json:"group"`

	// Version is the object's API version.
	// +required
	Version string `json:"version"`

	// Resource is the object's plural resource name.
	// +required
	Resource string `json:"resource"`

	// Namespace is the object's namespace, if namespaced.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Name is the object's name.
	// +required
	Name string `json:"name"`
}
