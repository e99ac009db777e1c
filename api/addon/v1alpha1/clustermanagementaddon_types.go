package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

func init() { objects = append(objects, &ClusterManagementAddOn{}, &ClusterManagementAddOnList{}) }

// ClusterManagementAddOn declares an add-on on the hub: its name is the
// add-on's name, and it says which configurations the add-on accepts and
// on which clusters it is installed.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=cma;cmas
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="DISPLAY NAME",type=string,JSONPath=`.spec.addOnMeta.displayName`
// +kubebuilder:printcolumn:name="CRD NAME",type=string,JSONPath=`.spec.addOnConfiguration.crdName`
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
	AddOnMeta AddOnMeta `json:"addOnMeta,omitzero"`

	// AddOnConfiguration is the older, single configuration of the add-on
	// (deprecated in OCM in favour of supportedConfigs).
	// +optional
	AddOnConfiguration ConfigCoordinates `json:"addOnConfiguration,omitzero"`

	// SupportedConfigs are the configuration kinds the add-on accepts, each
	// with an optional default object.
	// +listType=map
	// +listMapKey=group
	// +listMapKey=resource
	// +optional
	SupportedConfigs []ConfigMeta `json:"supportedConfigs,omitempty"`

	// InstallStrategy says on which clusters the add-on is installed.
	// +kubebuilder:default={type: Manual}
	// +optional
	InstallStrategy InstallStrategy `json:"installStrategy,omitzero"`
}

// ConfigMeta is a configuration kind an add-on accepts.
type ConfigMeta struct {
	ConfigGroupResource `json:",inline"`

	// DefaultConfig is used by clusters that name no object of this kind.
	// +optional
	DefaultConfig *ConfigReferent `json:"defaultConfig,omitempty"`
}

// InstallStrategy says on which clusters an add-on is installed.
type InstallStrategy struct {
	// Type is Manual (a ManagedClusterAddOn is created by hand per cluster)
	// or Placements (on every cluster the placements choose).
	// +kubebuilder:validation:Enum=Manual;Placements
	// +kubebuilder:default=Manual
	// +optional
	Type string `json:"type,omitempty"`

	// Placements choose the clusters for type Placements.
	// +listType=map
	// +listMapKey=namespace
	// +listMapKey=name
	// +optional
	Placements []PlacementStrategy `json:"placements,omitempty"`
}

// Install strategy types.
const (
	// AddonInstallStrategyManual installs an add-on only where a ManagedClusterAddOn is created.
	AddonInstallStrategyManual = "Manual"
	// AddonInstallStrategyPlacements installs an add-on on the clusters of placements.
	AddonInstallStrategyPlacements = "Placements"
)

// PlacementStrategy is one Placement of an install strategy.
type PlacementStrategy struct {
	PlacementRef `json:",inline"`

	// Configs override the add-on's default configurations on these clusters.
	// +optional
	Configs []AddOnConfig `json:"configs,omitempty"`

	// RolloutStrategy is how the add-on, and changes to its configuration,
	// reach these clusters.
	// +kubebuilder:default={type: All}
	// +optional
	RolloutStrategy workv1alpha1.RolloutStrategy `json:"rolloutStrategy,omitzero"`
}

// ClusterManagementAddOnStatus reports an add-on's configurations and installation.
type ClusterManagementAddOnStatus struct {
	// DefaultConfigReferences are the default configurations in effect.
	// +optional
	DefaultConfigReferences []DefaultConfigReference `json:"defaultconfigReferences,omitempty"`

	// InstallProgressions report the rollout per Placement.
	// +optional
	InstallProgressions []InstallProgression `json:"installProgressions,omitempty"`
}

// DefaultConfigReference is a default configuration in effect.
type DefaultConfigReference struct {
	ConfigGroupResource `json:",inline"`

	// DesiredConfig is the configuration object and its spec hash.
	// +optional
	DesiredConfig *ConfigSpecHash `json:"desiredConfig,omitempty"`
}

// InstallProgression reports the rollout of an add-on to a Placement's clusters.
type InstallProgression struct {
	PlacementRef `json:",inline"`

	// ConfigReferences are the configurations being rolled out.
	// +optional
	ConfigReferences []InstallConfigReference `json:"configReferences,omitempty"`

	// Conditions describe the rollout.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// InstallConfigReference is a configuration being rolled out.
type InstallConfigReference struct {
	ConfigGroupResource `json:",inline"`

	// DesiredConfig is the configuration to roll out.
	// +optional
	DesiredConfig *ConfigSpecHash `json:"desiredConfig,omitempty"`

	// LastAppliedConfig is the configuration applied on every cluster.
	// +optional
	LastAppliedConfig *ConfigSpecHash `json:"lastAppliedConfig,omitempty"`

	// LastKnownGoodConfig is the last configuration that rolled out successfully.
	// +optional
	LastKnownGoodConfig *ConfigSpecHash `json:"lastKnownGoodConfig,omitempty"`
}
