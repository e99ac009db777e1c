package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

func init() { objects = append(objects, &AddOnTemplate{}, &AddOnTemplateList{}) }

// AddOnTemplate describes an add-on's agent as a ManifestWork spec, and the
// hub credentials the agent gets, so that an add-on manager can install it
// with no code of its own.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="ADDON NAME",type=string,JSONPath=`.spec.addonName`
type AddOnTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the template.
	// +required
	Spec AddOnTemplateSpec `json:"spec"`
}

// AddOnTemplateList is a list of AddOnTemplates.
//
// +kubebuilder:object:root=true
type AddOnTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the AddOnTemplates.
	Items []AddOnTemplate `json:"items"`
}

// AddOnTemplateSpec is an add-on's agent and its hub credentials.
type AddOnTemplateSpec struct {
	// AddonName is the add-on (ClusterManagementAddOn) this template is for.
	// +required
	AddonName string `json:"addonName"`

	// AgentSpec is the ManifestWork spec that deploys the add-on's agent.
	// +required
	AgentSpec workv1.ManifestWorkSpec `json:"agentSpec"`

	// Registration lists the hub credentials the agent gets.
	// +optional
	Registration []RegistrationSpec `json:"registration,omitempty"`
}

// RegistrationSpec is one hub credential of an add-on's agent.
type RegistrationSpec struct {
	// Type is KubeClient (a client certificate for the hub API server) or
	// CustomSigner (a certificate from the add-on's own CA).
	// +kubebuilder:validation:Enum=KubeClient;CustomSigner
	// +required
	Type string `json:"type"`

	// KubeClient configures type KubeClient.
	// +optional
	KubeClient *KubeClientRegistrationConfig `json:"kubeClient,omitempty"`

	// CustomSigner configures type CustomSigner.
	// +optional
	CustomSigner *CustomSignerRegistrationConfig `json:"customSigner,omitempty"`
}

// KubeClientRegistrationConfig is what a KubeClient credential may do on the hub.
type KubeClientRegistrationConfig struct {
	// HubPermissions are the roles the credential is bound to.
	// +optional
	HubPermissions []HubPermissionConfig `json:"hubPermissions,omitempty"`
}

// HubPermissionConfig binds an add-on's credential to a role on the hub.
type HubPermissionConfig struct {
	// Type is CurrentCluster (the cluster's own namespace) or
	// SingleNamespace (a named namespace).
	// +kubebuilder:validation:Enum=CurrentCluster;SingleNamespace
	// +required
	Type string `json:"type"`

	// CurrentCluster configures type CurrentCluster.
	// +optional
	CurrentCluster *CurrentClusterBindingConfig `json:"currentCluster,omitempty"`

	// SingleNamespace configures type SingleNamespace.
	// +optional
	SingleNamespace *SingleNamespaceBindingConfig `json:"singleNamespace,omitempty"`
}

// CurrentClusterBindingConfig binds a ClusterRole in the cluster's own namespace.
type CurrentClusterBindingConfig struct {
	// ClusterRoleName is the ClusterRole bound.
	// +required
	ClusterRoleName string `json:"clusterRoleName"`
}

// SingleNamespaceBindingConfig binds a role in one namespace.
type SingleNamespaceBindingConfig struct {
	// Namespace is where the role is bound.
	// +required
	Namespace string `json:"namespace"`

	// RoleRef is the role bound.
	// +required
	RoleRef RoleRef `json:"roleRef"`
}

// RoleRef names a Role or ClusterRole.
//
// +structType=atomic
type RoleRef struct {
	// APIGroup is the role's API group, rbac.authorization.k8s.io.
	// +required
	APIGroup string `json:"apiGroup"`

	// Kind is Role or ClusterRole.
	// +required
	Kind string `json:"kind"`

	// Name is the role's name.
	// +required
	Name string `json:"name"`
}

// CustomSignerRegistrationConfig is a certificate from an add-on's own CA.
type CustomSignerRegistrationConfig struct {
	// SignerName is the CSR signer name.
	// +kubebuilder:validation:MinLength=5
	// +kubebuilder:validation:MaxLength=571
	// +kubebuilder:validation:Pattern=`^([a-z0-9][a-z0-9-]*[a-z0-9]\.)+[a-z]+\/[a-z0-9-\.]+$`
	// +required
	SignerName string `json:"signerName"`

	// Subject is the certificate's subject.
	// +optional
	Subject *Subject `json:"subject,omitempty"`

	// SigningCA is the Secret with the CA's certificate and key.
	// +required
	SigningCA SigningCARef `json:"signingCA"`
}

// SigningCARef names a Secret of type kubernetes.io/tls.
type SigningCARef struct {
	// Namespace is the Secret's namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Name is the Secret's name.
	// +required
	Name string `json:"name"`
}
