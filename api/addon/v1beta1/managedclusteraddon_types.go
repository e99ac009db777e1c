package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
)

func init() { objects = append(objects, &ManagedClusterAddOn{}, &ManagedClusterAddOnList{}) }

// ManagedClusterAddOn is an add-on on one managed cluster. It lives in the
// cluster's hub namespace and is named after the add-on.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=mca;mcas
// +kubebuilder:subresource:status
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
	// Configs override the add-on's default configurations on this cluster.
	// +optional
	Configs []addonv1alpha1.AddOnConfig `json:"configs,omitempty"`
}

// ManagedClusterAddOnStatus reports an add-on on one cluster.
type ManagedClusterAddOnStatus struct {
	// Conditions describe the add-on on this cluster.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// RelatedObjects are objects the add-on relates to.
	// +optional
	RelatedObjects []addonv1alpha1.ObjectReference `json:"relatedObjects,omitempty"`

	// AddOnMeta is how the add-on presents itself.
	// +optional
	AddOnMeta addonv1alpha1.AddOnMeta `json:"addOnMeta,omitzero"`

	// SupportedConfigs are the configuration kinds the add-on accepts.
	// +listType=map
	// +listMapKey=group
	// +listMapKey=resource
	// +optional
	SupportedConfigs []addonv1alpha1.ConfigGroupResource `json:"supportedConfigs,omitempty"`

	// ConfigReferences are the configurations in effect on this cluster.
	// +optional
	ConfigReferences []ConfigReference `json:"configReferences,omitempty"`

	// Namespace is where the add-on's agent runs on the managed cluster.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Registrations are the credentials the add-on's agent asks the hub for.
	// +optional
	Registrations []RegistrationConfig `json:"registrations,omitempty"`

	// HealthCheck is how the add-on's health is determined.
	// +optional
	HealthCheck addonv1alpha1.HealthCheck `json:"healthCheck,omitzero"`
}

// ConfigReference is a configuration in effect for an add-on on one cluster.
type ConfigReference struct {
	addonv1alpha1.ConfigGroupResource `json:",inline"`

	// LastObservedGeneration is the configuration object's generation last seen.
	// +optional
	LastObservedGeneration int64 `json:"lastObservedGeneration,omitempty"`

	// DesiredConfig is the configuration that should be in effect.
	// +optional
	DesiredConfig *addonv1alpha1.ConfigSpecHash `json:"desiredConfig,omitempty"`

	// LastAppliedConfig is the configuration the agent applied last.
	// +optional
	LastAppliedConfig *addonv1alpha1.ConfigSpecHash `json:"lastAppliedConfig,omitempty"`
}

// RegistrationConfig is a credential an add-on's agent asks for.
type RegistrationConfig struct {
	// Type is kubeClient (a client certificate for the hub API server) or
	// customSigner (a certificate from the add-on's own CA).
	// +kubebuilder:validation:Enum=kubeClient;customSigner
	// +required
	Type string `json:"type"`

	// KubeClient configures type kubeClient.
	// +optional
	KubeClient *KubeClientConfig `json:"kubeClient,omitempty"`

	// CustomSigner configures type customSigner.
	// +optional
	CustomSigner *CustomSignerConfig `json:"customSigner,omitempty"`
}

// KubeClientConfig is a client certificate for the hub API server.
type KubeClientConfig struct {
	// Subject is the certificate's subject.
	// +optional
	Subject KubeClientSubject `json:"subject,omitzero"`

	// Driver is how the agent authenticates: csr or token.
	// +kubebuilder:validation:Enum=csr;token
	// +optional
	Driver string `json:"driver,omitempty"`
}

// KubeClientSubject is the user and groups of a hub client certificate.
type KubeClientSubject struct {
	// User is the user name.
	// +optional
	User string `json:"user,omitempty"`

	// Groups are the groups.
	// +optional
	Groups []string `json:"groups,omitempty"`
}

// CustomSignerConfig is a certificate from an add-on's own CA.
type CustomSignerConfig struct {
	// SignerName is the CSR signer name.
	// +kubebuilder:validation:MinLength=5
	// +kubebuilder:validation:MaxLength=571
	// +kubebuilder:validation:Pattern=`^([a-z0-9][a-z0-9-]*[a-z0-9]\.)+[a-z]+\/[a-z0-9-\.]+$`
	// +required
	SignerName string `json:"signerName"`

	// Subject is the certificate's subject.
	// +optional
	Subject *Subject `json:"subject,omitempty"`
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
	OrganizationUnits []string `json:"organizationUnits,omitempty"`
}
