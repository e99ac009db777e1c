// Package addon is the hub's generic add-on manager
// (addon.open-cluster-management.io; the contract is docs/addons.md,
// sections 2, 3, 7 and 9): what OCM's addon-manager does for every add-on,
// whatever deploys it (the hub itself for template add-ons, in
// hub/addon/template, or an add-on's own addon-framework manager).
//
// Reconciler runs once per add-on name, over its ClusterManagementAddOn
// (CMA) and all ManagedClusterAddOns (MCAs) of that name, so that a
// rollout sees every cluster at once. Its phases, one file each:
//
//   - install: with installStrategy Placements, the union of the
//     placements' decisions gets an MCA (empty spec, controller
//     ownerReference to the CMA, the cluster's addon.open-cluster-management.io/
//     annotations mirrored while it stays chosen); every other MCA of the
//     add-on is deleted, user-made or not. A missing Placement, or one that
//     chooses nothing, installs nowhere.
//   - own: every MCA of a managed add-on gets the controller ownerReference
//     (deleting the CMA garbage-collects its MCAs).
//   - configs: effective configs per group and resource, CMA defaults <
//     placement configs < MCA spec.configs, each with its spec hash
//     (internal/addon.SpecHash) and generation; the defaults go to CMA
//     status.defaultconfigReferences. A config that cannot be read keeps
//     an empty hash and Configured=False says which and why. An MCA naming
//     a config type missing from status.supportedConfigs gets
//     Progressing=False ConfigurationUnsupported and takes no part in the
//     rollout.
//   - configure: per placement, internal/rollout (shared with
//     ManifestWorkReplicaSets) decides which clusters get their desired
//     configs in MCA status now: a cluster is updated once its status
//     carries them, succeeded once they were applied, failed when
//     Progressing says Failed. MCAs no placement chose get theirs at once.
//     Configured is True once a cluster has its desired configs, else
//     False ConfigurationsNotConfigured; CMA status.installProgressions
//     counts each placement's clusters as OCM words it.
//   - progressing: Progressing from the add-on's deploy ManifestWorks
//     (label open-cluster-management.io/addon-name, pre-delete work left
//     out): WaitingForManifestApplied until a deploying manager wrote
//     ManifestApplied, Progressing while a work lacks the desired hashes
//     (annotation open-cluster-management.io/config-spec-hash) or is not
//     Applied and Available for its generation, then Completed, when
//     lastAppliedConfig := desiredConfig (never rolled back).
//   - conditions: when nothing will deploy an MCA, ManifestApplied=False
//     says so: ClusterManagementAddOnNotFound (no CMA declares the add-on),
//     or AddOnManagerNotRunning for a managed add-on that is no template
//     add-on (its configs name no addontemplates) while no add-on manager
//     has written anything on the MCA (supportedConfigs, registrations,
//     RegistrationApplied, ManifestApplied). Once one writes, the hub takes
//     its condition back. An add-on whose CMA lifecycle annotation
//     (addon.open-cluster-management.io/lifecycle) is neither absent nor
//     addon-manager, e.g. self, is left wholly to its own manager: the hub
//     writes nothing on it but takes back an AddOnManagerNotRunning it wrote
//     before the annotation was set. Whether such a manager runs the hub
//     cannot know, so it does not claim either way.
//
// Everything one reconcile changes is written at its end, once per object,
// with optimistic locks: the add-on's own manager and the agent write the
// same MCA status (their conditions and fields are left as they are).
//
// ClusterReconciler runs once per ManagedCluster, for every add-on whoever
// manages it: label feature.open-cluster-management.io/addon-<a> =
// available / unhealthy / unreachable from each MCA's Available (removed
// with the MCA or while it is deleting), and, while the cluster's
// ManagedClusterConditionAvailable is Unknown, that condition copied into
// every MCA's Available. A deleted cluster's MCAs are deleted, and waited
// for, before its ManifestWorks (hub/registration's cleanup).
//
// It reads configs of any type through the hub's cache and watches each
// config kind the first time it reads one.
package addon
