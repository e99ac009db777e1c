package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
)

func init() { objects = append(objects, &ClusterManagementAddOn{}, &ClusterManagementAddOnList{}) }

// ClusterManagementAddOn declares an add-on on the hub: its name is the
// add-on's name, and it says which configurations the add-on uses by
// default and on which clusters it is installed.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=cma;cmas
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="DISPLAY NAME",type=string,JSONPath=`.spec.addOnMeta.displayName`
type ClusterManagementAddOn struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec declares the add-on.
	// +required
	Spec ClusterManagementAddOnSpec `json:"spec"`

	// Status reports the add-on's configurations and installation.
	// +optional
	Status ClusterManagementAddOnStatus `json:"status,omitempty"`
}

// ClusterManagementAddOnList is a list of ClusterManagementAddOns.
//
// +kubebuilder:object:root=true
type ClusterManagementAddOnList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the ClusterManagementAddOns.
	Items []ClusterManagementAddOn `json:"items"`
}

// ClusterManagementAddOnSpec declares an add-on.
type ClusterManagementAddOnSpec struct {
	// AddOnMeta is how the add-on presents itself.
	// +optional
	AddOnMeta addonv1alpha1.AddOnMeta `json:"addOnMeta,omitzero"`

	// DefaultConfigs are the configurations used by clusters that name none
	// of the same kind.
	// +listType=map
	// +listMapKey=group
	// +listMapKey=resource
	// +optional
	DefaultConfigs []addonv1alpha1.AddOnConfig `json:"defaultConfigs,omitempty"`

	// InstallStrategy says on which clusters the add-on is installed.
	// +kubebuilder:default={type: Manual}
	// +optional
	InstallStrategy addonv1alpha1.InstallStrategy `json:"installStrategy,omitzero"`
}

// ClusterManagementAddOnStatus reports an add-on's configurations and installation.
type ClusterManagementAddOnStatus struct {
	// DefaultConfigReferences are the default configurations in effect.
	// +optional
	DefaultConfigReferences []addonv1alpha1.DefaultConfigReference `json:"defaultConfigReferences,omitempty"`

	// InstallProgressions report the rollout per Placement.
	// +optional
	InstallProgressions []addonv1alpha1.InstallProgression `json:"installProgressions,omitempty"`
}
