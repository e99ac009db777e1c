package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func init() { objects = append(objects, &ManagedClusterAddOn{}, &ManagedClusterAddOnList{}) }

// ManagedClusterAddOn is an add-on on one managed cluster. It lives in the
// cluster's hub namespace and is named after the add-on (its
// ClusterManagementAddOn); the add-on's manager and agent report in its
// status.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=mca;mcas
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="Available",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].status`
// +kubebuilder:printcolumn:name="Degraded",type=string,JSONPath=`.status.conditions[?(@.type=="Degraded")].status`
// +kubebuilder:printcolumn:name="Progressing",type=string,JSONPath=`.status.conditions[?(@.type=="Progressing")].status`
type ManagedClusterAddOn struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what is wanted of the add-on on this cluster.
	// +required
	Spec ManagedClusterAddOnSpec `json:"spec"`

	// Status reports the add-on on this cluster.
	// +optional
	Status ManagedClusterAddOnStatus `json:"status,omitempty"`
}

// ManagedClusterAddOnList is a list of ManagedClusterAddOns.
//
// +kubebuilder:object:root=true
type ManagedClusterAddOnList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the ManagedClusterAddOns.
	Items []ManagedClusterAddOn `json:"items"`
}

// ManagedClusterAddOnSpec is what is wanted of an add-on on one cluster.
type ManagedClusterAddOnSpec struct {
	// InstallNamespace is the namespace on the managed cluster where the
	// add-on's agent is installed (deprecated in OCM in favour of
	// AddOnDeploymentConfig's agentInstallNamespace).
	// +kubebuilder:default=open-cluster-management-agent-addon
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	InstallNamespace string `json:"installNamespace,omitempty"`

	// Configs override the add-on's default configurations on this cluster.
	// +optional
	Configs []AddOnConfig `json:"configs,omitempty"`
}

// ManagedClusterAddOnStatus reports an add-on on one cluster.
type ManagedClusterAddOnStatus struct {
	// Conditions describe the add-on on this cluster: Available, Degraded,
	// Progressing and the like, written by whoever runs the add-on.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// RelatedObjects are objects the add-on relates to.
	// +optional
	RelatedObjects []ObjectReference `json:"relatedObjects,omitempty"`

	// AddOnMeta is how the add-on presents itself.
	// +optional
	AddOnMeta AddOnMeta `json:"addOnMeta,omitzero"`

	// AddOnConfiguration is the older, single configuration of the add-on.
	// +optional
	AddOnConfiguration ConfigCoordinates `json:"addOnConfiguration,omitzero"`

	// SupportedConfigs are the configuration kinds the add-on accepts.
	// +listType=map
	// +listMapKey=group
	// +listMapKey=resource
	// +optional
	SupportedConfigs []ConfigGroupResource `json:"supportedConfigs,omitempty"`

	// ConfigReferences are the configurations in effect on this cluster.
	// +optional
	ConfigReferences []ConfigReference `json:"configReferences,omitempty"`

	// Namespace is where the add-on's agent runs on the managed cluster.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Registrations are the client certificates the add-on's agent asks the hub for.
	// +optional
	Registrations []RegistrationConfig `json:"registrations,omitempty"`

	// HealthCheck is how the add-on's health is determined.
	// +optional
	HealthCheck HealthCheck `json:"healthCheck,omitzero"`

	// KubeClientDriver is how the add-on's agent authenticates to the hub.
	// +kubebuilder:validation:Enum=csr;token
	// +optional
	KubeClientDriver string `json:"kubeClientDriver,omitempty"`
}

// ConfigReference is a configuration in effect for an add-on on one cluster.
type ConfigReference struct {
	ConfigGroupResource `json:",inline"`
	ConfigReferent      `json:",inline"`

	// LastObservedGeneration is the configuration object's generation last seen.
	// +optional
	LastObservedGeneration int64 `json:"lastObservedGeneration,omitempty"`

	// DesiredConfig is the configuration that should be in effect.
	// +optional
	DesiredConfig *ConfigSpecHash `json:"desiredConfig,omitempty"`

	// LastAppliedConfig is the configuration the agent applied last.
	// +optional
	LastAppliedConfig *ConfigSpecHash `json:"lastAppliedConfig,omitempty"`
}

// RegistrationConfig is a client certificate an add-on's agent asks for.
type RegistrationConfig struct {
	// SignerName is the CSR signer, e.g. kubernetes.io/kube-apiserver-client.
	// +kubebuilder:validation:MinLength=5
	// +kubebuilder:validation:MaxLength=571
	// +kubebuilder:validation:Pattern=`^([a-z0-9][a-z0-9-]*[a-z0-9]\.)+[a-z]+\/[a-z0-9-\.]+$`
	// +required
	SignerName string `json:"signerName"`

	// Subject is the certificate's subject.
	// +optional
	Subject Subject `json:"subject,omitzero"`
}

// Subject is a certificate subject.
type Subject struct {
	// User is the user name (CN).
	// +optional
	User string `json:"user,omitempty"`

	// Groups are the groups (O).
	// +optional
	Groups []string `json:"groups,omitempty"`

	// OrganizationUnits are the organisational units (OU).
	// +optional
	OrganizationUnits []string `json:"organizationUnit,omitempty"`
}

// HealthCheck is how an add-on's health is determined.
type HealthCheck struct {
	// Mode is Lease (the add-on's agent renews a lease) or Customized (the
	// add-on's manager decides).
	// +kubebuilder:validation:Enum=Lease;Customized
	// +kubebuilder:default=Lease
	// +optional
	Mode string `json:"mode,omitempty"`
}
