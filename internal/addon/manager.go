package addon

// The generic add-on manager's conditions on a ManagedClusterAddOn
// (docs/addons.md, sections 3 and 7): Configured and Progressing, with
// OCM's reasons and messages, which OCM's tools and tests read.
const (
	ReasonConfigured       = "ConfigurationsConfigured"
	MessageConfigured      = "Configurations configured"
	ReasonNotConfigured    = "ConfigurationsNotConfigured"
	MessageNotConfigured   = "Configurations updated and not configured yet"
	ReasonProgressing      = "Progressing"
	ReasonCompleted        = "Completed"
	MessageCompleted       = "completed with no errors."
	ReasonFailed           = "Failed"
	ReasonUnsupported      = "ConfigurationUnsupported"
	ReasonWaitingManifest  = "WaitingForManifestApplied"
	ReasonWaitingHosting   = "WaitingForHostingManifestApplied"
	MessageWaitingManifest = "Waiting for ManagedClusterAddOn ManifestApplied condition"
	MessageWaitingHosting  = "Waiting for ManagedClusterAddOn HostingManifestApplied condition"

	// ConditionHostingManifestApplied is ManifestApplied of an add-on in
	// hosted mode, for its works on the hosting cluster.
	ConditionHostingManifestApplied = "HostingManifestApplied"
)

// AnnotationPrefix starts the ManagedCluster annotations that the add-on
// manager mirrors onto the ManagedClusterAddOns it creates.
const AnnotationPrefix = Group + "/"

// Values of FeatureLabel.
const (
	FeatureAvailable   = "available"
	FeatureUnhealthy   = "unhealthy"
	FeatureUnreachable = "unreachable"
)
