// Package addon is the agent side of OCM's add-on registration
// (docs/addons.md, sections 5 and 7): for every ManagedClusterAddOn in its
// cluster's namespace on the hub it gets each registration of the add-on a
// client certificate, keeps it in a Secret in the add-on's install
// namespace on the managed cluster, rotates it, and reports the add-on's
// health from the add-on's Lease.
//
// Per add-on <a> it:
//
//   - writes driver "csr" (status.kubeClientDriver, the v1alpha1 form of
//     the kubeClient registration's driver) once the add-on has a kubeClient
//     registration, and does nothing else in that pass;
//   - per registration asks for a certificate with a CSR (generateName
//     addon-<cluster>-<a>-, labelled with the cluster and the add-on, a fresh
//     ECDSA P-256 key, DNS SAN <a>.addon.open-cluster-management.io, client
//     usages, expirationSeconds), none while ten CSRs of the cluster's add-on
//     are on the hub (ClusterCertificateRotated=False);
//   - writes the issued certificate into Secret <a>-hub-kubeconfig
//     (kubeClient, with a kubeconfig that reaches the hub as the agent does)
//     or <a>-<signer>-client-cert (custom signers) in the install namespace,
//     which it never creates: it waits until the add-on's work has made it.
//     With Config.InstallNamespaces (the agent chart's
//     addons.installNamespaces) it writes and looks for Secrets in those
//     namespaces only, and an add-on installed elsewhere gets no CSR but
//     ClusterCertificateRotated=False saying which value to change.
//     Without, it looks for its Secrets in the default install namespace,
//     its add-ons' install namespaces and those it recorded in ConfigMap
//     flotilla-agent-addon-namespaces of Config.Namespace before writing a
//     Secret there (so that a restarted agent finds those of add-ons that
//     went), never cluster-wide, as OCM's registration agent watches each
//     add-on's install namespace: it needs Secrets only where add-ons run,
//     and an add-on where it may not read them gets
//     ClusterCertificateRotated=False saying what to grant;
//   - asks again when 20–25 % of the certificate's life is left (drawn per
//     certificate), when the subject or the kubeconfig no longer match, or
//     when the registration or install namespace changed (then the old
//     Secret goes first); it looks at every Secret at least every 5 minutes;
//   - reports Available from Lease <a> in the install namespace every 30
//     seconds when the add-on's health check mode is Lease;
//   - deletes the add-on's Secrets once its ManagedClusterAddOn is gone (not
//     while it is being deleted).
//
// What it writes on the hub stays in the cluster's namespace: CSRs, which
// only the hub approves, and the status of the cluster's
// ManagedClusterAddOns. Its Secrets carry the labels
// open-cluster-management.io/cluster-name and addon-name, by which it finds
// them again after a restart. Secrets are never cached; the hub cache holds
// only the cluster's ManagedClusterAddOns and its add-on CSRs.
package addon
