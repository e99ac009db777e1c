// Package template runs AddOnTemplate add-ons on the hub, as OCM's add-on
// manager does (docs/addons.md, sections 4 to 8): an add-on whose
// ClusterManagementAddOn lists addontemplates among its supported configs
// needs no code of its own.
//
// The controller works on one ManagedClusterAddOn at a time. Its template
// is the addontemplates entry of the MCA's status.configReferences (with a
// spec hash), and its AddOnDeploymentConfig the addondeploymentconfigs
// entry, both written by the generic add-on manager (hub/addon). A pass:
//
//   - writes status.supportedConfigs (addondeploymentconfigs,
//     addontemplates), status.namespace, healthCheck.mode Customized and
//     the registrations (kubeClient: user
//     system:open-cluster-management:cluster:<c>:addon:<a>:agent:<a>-agent
//     with both default groups; customSigner: the template's subject);
//   - grants the template's hub permissions to the subject the status
//     already shows (RegistrationApplied=False PermissionConfigPending for
//     the one pass before it does), as RoleBindings named
//     open-cluster-management:<a>:<role kind>:agent. A CurrentCluster
//     binding names the agent's user and its per-cluster group only,
//     stricter than OCM, whose binding also names the add-on's group of
//     every cluster and so lets every cluster's agent of the add-on into
//     every cluster namespace of it. A SingleNamespace binding is one
//     object in a namespace that the add-on's agents of all clusters
//     share, so it binds the add-on's group
//     system:open-cluster-management:addon:<a>; like OCM's, it is never
//     cleaned up. CurrentCluster bindings are owned by the MCA;
//   - renders the template: {{VAR}} substitution into the manifests' JSON,
//     the built-in env vars, registration volumes, node placement, image
//     mirrors (the config's over the cluster's image-registries
//     annotation), install namespace, proxy (with its CA bundle ConfigMap)
//     and resources. A template that does not render sets
//     ManifestApplied=False ManifestWorkApplyFailed, saying why, and no
//     work is created or changed;
//   - once RegistrationApplied exists and Configured is True, creates or
//     updates the deploy works addon-<a>-deploy-<i> (at most 400 KiB of
//     manifests each; label addon-name, controller owner the MCA, the
//     config-spec-hash annotation, WellKnownStatus feedback for every
//     Deployment and DaemonSet, SelectivelyOrphan for manifests annotated
//     deletion-orphan) and sets ManifestApplied;
//   - holds the MCA with the pre-delete finalizer while the template has
//     pre-delete Jobs or Pods; once the MCA is deleting, creates the hook
//     work addon-<a>-pre-delete and removes the finalizer when every hook
//     completed (HookManifestCompleted);
//   - sets Available from the works (WorkloadAvailability), while the
//     cluster's own availability is known.
//
// A work is rewritten only when what this controller would write changed,
// by the hash in annotation addon.flotilla.io/rendered-hash: the API
// server defaults fields of a work, which a comparison would take for
// changes. The add-on manager of OCM runs per add-on and starts and stops
// with the ClusterManagementAddOn; here one controller serves every
// template add-on, and an MCA is its business while its ClusterManagementAddOn
// is a template add-on's or the MCA holds the pre-delete finalizer.
//
// It watches ManagedClusterAddOns, ClusterManagementAddOns, AddOnTemplates,
// AddOnDeploymentConfigs, ManagedClusters (annotations, Available,
// deletion) and, in a cache of its own, the ManifestWorks labelled
// open-cluster-management.io/addon-name. It writes ManifestWorks,
// RoleBindings, and the MCAs' finalizers and status fields named above.
package template
