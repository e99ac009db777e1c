package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
)

func init() { objects = append(objects, &AddOnDeploymentConfig{}, &AddOnDeploymentConfigList{}) }

// AddOnDeploymentConfig configures how an add-on's agent is deployed on
// managed clusters; its spec is v1alpha1's.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced
type AddOnDeploymentConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the deployment configuration.
	// +required
	Spec addonv1alpha1.AddOnDeploymentConfigSpec `json:"spec"`
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
