package addon

import "github.com/flotilla-io/flotilla/internal/addon"

const (
	// ConditionManifestApplied is OCM's condition that an add-on's agent
	// was deployed on the cluster (clusteradm get addon shows it).
	ConditionManifestApplied = addon.ConditionManifestApplied
	// ReasonAddOnManagerNotRunning: the add-on is neither a template
	// add-on nor run by a manager that has written anything on this
	// ManagedClusterAddOn yet.
	ReasonAddOnManagerNotRunning = "AddOnManagerNotRunning"
	// ReasonClusterManagementAddOnNotFound: no ClusterManagementAddOn
	// declares the add-on.
	ReasonClusterManagementAddOnNotFound = "ClusterManagementAddOnNotFound"

	// LifecycleAnnotation on a ClusterManagementAddOn says who runs the
	// add-on; LifecycleSelf means the add-on's own manager.
	LifecycleAnnotation = addon.LifecycleAnnotation
	// LifecycleSelf is LifecycleAnnotation's value for add-ons run by their own manager.
	LifecycleSelf = addon.LifecycleSelf
)
