// Package conversion serves the add-on API's two versions from one stored
// object: the CRD conversion webhook of ClusterManagementAddOn,
// ManagedClusterAddOn and AddOnDeploymentConfig between v1alpha1 (stored;
// clusteradm, older agents and addon-framework releases) and v1beta1 (OCM
// v1.3's agent and addon-framework), as ../shared/docs/addons.md lays out:
//
//   - ManagedClusterAddOn: v1alpha1 spec.installNamespace lives in v1beta1
//     as the annotation addon.open-cluster-management.io/v1alpha1-install-namespace;
//     v1alpha1 registrations {signerName, subject} are v1beta1's typed
//     kubeClient or customSigner registrations, and status.kubeClientDriver
//     is the kubeClient registration's driver; v1alpha1 configReferences
//     carry the desired config's namespace and name inline as well.
//   - ClusterManagementAddOn: v1alpha1 spec.supportedConfigs with their
//     defaultConfig are v1beta1 spec.defaultConfigs (an entry without a
//     default is named __reserved_no_default__), and v1alpha1's
//     status.defaultconfigReferences is v1beta1's defaultConfigReferences.
//   - AddOnDeploymentConfig: the same fields in both.
//
// The deprecated v1alpha1 addOnConfiguration fields have no v1beta1 form
// and are dropped going to v1beta1, as OCM drops them.
//
// The hub's webhook server serves Handler at Path, and Install points the
// CRDs at it once the server answers.
package conversion
