// Package addon is the hub side of the add-on APIs
// (addon.open-cluster-management.io): the hub serves ClusterManagementAddOn,
// ManagedClusterAddOn, AddOnDeploymentConfig and AddOnTemplate, so that OCM
// agents and tools work against it, but it runs no add-on manager: nothing
// in Flotilla installs an add-on's agent on a cluster.
//
// The controller says so where a user looks. On every ManagedClusterAddOn
// it sets ManifestApplied=False, reason AddOnManagerNotRunning (the add-on
// is declared by a ClusterManagementAddOn that no manager runs) or
// ClusterManagementAddOnNotFound (no such add-on is declared), with a
// message that says what to do. An add-on whose ClusterManagementAddOn is
// annotated addon.open-cluster-management.io/lifecycle=self is run by its
// own manager (OCM's convention): the controller leaves its conditions to
// that manager, and takes back only its own.
//
// It watches ManagedClusterAddOns and ClusterManagementAddOns (v1alpha1, the
// stored version) and writes only status.conditions of ManagedClusterAddOns.
package addon
