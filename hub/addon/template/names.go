package template

// Reasons and messages of the conditions a template add-on's manager
// writes on its ManagedClusterAddOns (docs/addons.md, section 7), as OCM
// writes them.
const (
	ReasonNilRegistration         = "NilRegistration"
	ReasonSetPermissionApplied    = "SetPermissionApplied"
	ReasonSetPermissionFailed     = "SetPermissionFailed"
	ReasonPermissionConfigPending = "PermissionConfigPending"

	ReasonManifestApplied       = "AddonManifestApplied"
	ReasonManifestApplyFailed   = "ManifestWorkApplyFailed"
	ReasonManifestAppliedFailed = "AddonManifestAppliedFailed"
	MessageManifestApplied      = "manifests of addon are applied successfully"
	MessageNoManifest           = "no manifest need to apply"

	ReasonHookCompleted    = "HookManifestIsCompleted"
	ReasonHookNotCompleted = "HookManifestIsNotCompleted"

	ReasonWorkNotFound     = "WorkNotFound"
	ReasonWorkNotApplied   = "WorkNotApplied"
	ReasonNoProbeResult    = "NoProbeResult"
	ReasonProbeUnavailable = "ProbeUnavailable"
	ReasonProbeAvailable   = "ProbeAvailable"
)

// oldPreDeleteFinalizers are the pre-delete finalizers of older OCM
// releases, dropped from the ManagedClusterAddOns that still carry them.
var oldPreDeleteFinalizers = []string{
	"cluster.open-cluster-management.io/addon-pre-delete",
	"cluster.open-cluster-management.io/hosting-addon-pre-delete",
	"cluster.open-cluster-management.io/hosting-manifests-cleanup",
}

const (
	// recorderName names the events of this controller.
	recorderName = "addon-template"
	// agentSuffix makes a template add-on's agent name: <addon>-agent.
	agentSuffix = "-agent"
)
