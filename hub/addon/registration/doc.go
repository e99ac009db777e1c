// Package registration is the hub side of add-on registration
// (docs/addons.md, section 5, "Approval and signing"): it approves the CSRs
// that clusters' agents create for the registrations of template add-ons,
// and signs those of their custom signers.
//
// It looks at CSRs whose name begins with "addon" and that carry the
// open-cluster-management.io/cluster-name and addon-name labels, of an
// add-on the hub manages (its ClusterManagementAddOn has no lifecycle
// annotation, or addon-manager) that is a template add-on (the
// ManagedClusterAddOn's status.configReferences, else the
// ClusterManagementAddOn's default configs, name an AddOnTemplate). Others
// are left to the add-on's own manager, or to a hub admin.
//
// A CSR is approved (reason AutoApprovedByHubCSRApprovingController) when:
//
//   - its requester is the accepted agent of the cluster its label names
//     (identity.ParseAgentUser of spec.username, and the cluster's
//     registration.flotilla.io/accepted-agent annotation), the cluster is
//     accepted and not being deleted, and the cluster has the add-on: so no
//     cluster, nor a certificate the hub gives no access, gets another
//     cluster's add-on identity;
//   - the template has a registration for its signer;
//   - kubernetes.io/kube-apiserver-client: OCM's default check — a PEM
//     CERTIFICATE REQUEST, CN the template agent's user
//     system:open-cluster-management:cluster:<c>:addon:<a>:agent:<a>-agent,
//     O both default groups of the add-on in that cluster (and at most
//     system:authenticated beside them), client usages, no SAN but
//     <a>.addon.open-cluster-management.io;
//   - a custom signer: client usages, the same SAN rule, and no name of the
//     subject that is Flotilla's or OCM's (system:open-cluster-management:…)
//     but the add-on's own in that cluster.
//
// A CSR that fails is left pending, and the reason is logged and put in a
// Warning event on the CSR. Certificates of kube-apiserver-client are
// signed by the hub's signer (kube-controller-manager's, which signs every
// approved CSR of that signer, whoever approved it); those of a template's
// custom signer are signed here with the kubernetes.io/tls Secret the
// template names (namespace default open-cluster-management-hub): valid 24
// hours, capped at the CA's expiry, subject and SANs of the request, usages
// digital signature, key encipherment, server and client auth.
//
// Old CSRs are collected by kube-controller-manager's CSR cleaner, which
// the hub runs (issued or denied after an hour, pending after a day), so
// that agents are never held at OCM's limit of ten CSRs per add-on.
//
// It reads CSRs, ClusterManagementAddOns, ManagedClusterAddOns,
// AddOnTemplates and ManagedClusters from the manager's cache, and signing
// CA Secrets from the API server (never cached); it writes CSR approvals
// and certificates, and events.
package registration
