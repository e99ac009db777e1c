package addon

const (
	// ConditionManifestApplied is OCM's condition that an add-on's agent
	// was deployed on the cluster (clusteradm get addon shows it).
	ConditionManifestApplied = "ManifestApplied"
	// ReasonAddOnManagerNotRunning: the add-on is declared, but no add-on
	// manager deploys it.
	ReasonAddOnManagerNotRunning = "AddOnManagerNotRunning"
	// ReasonClusterManagementAddOnNotFound: no ClusterManagementAddOn
	// declares the add-on.
	ReasonClusterManagementAddOnNotFound = "ClusterManagementAddOnNotFound"

	// LifecycleAnnotation on a ClusterManagementAddOn says who runs the
	// add-on; LifecycleSelf means the add-on's own manager.
	LifecycleAnnotation = "addon.open-cluster-management.io/lifecycle"
	// LifecycleSelf is LifecycleAnnotation's value for add-ons run by their own manager.
	LifecycleSelf = "self"
)
