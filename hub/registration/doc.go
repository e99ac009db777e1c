// Package registration is the hub side of the registration protocol (the
// double handshake of shared/docs/contract.md, "Registration").
//
// It owns, per accepted ManagedCluster <c>: the namespace <c>, the ClusterRole
// and ClusterRoleBinding open-cluster-management:managedcluster:<c>, the
// RoleBindings in <c> to the shared ClusterRoles
// open-cluster-management:managedcluster:registration and
// open-cluster-management:managedcluster:work (which it also keeps), the
// Lease managed-cluster-lease (created when missing), the conditions
// HubAcceptedManagedCluster and (only to mark it Unknown)
// ManagedClusterConditionAvailable, the hub taints unreachable and
// unavailable in spec.taints, and the clusterset label of a cluster in no
// set (it puts it into "default", as OCM's hub does). It also owns the
// ValidatingAdmissionPolicy that lets only users allowed update on
// register.open-cluster-management.io managedclusters/accept set
// spec.hubAcceptsClient to true or set the accepted agent, and the one that
// holds a join token for one cluster to that cluster (installed by Install
// at hub start).
//
// Two controllers run in the hub manager:
//
//   - The cluster controller watches ManagedClusters and what it creates for
//     them (RBAC, namespaces, deleted ManifestWorks). It grants or revokes
//     access as spec.hubAcceptsClient says, marks a cluster whose agent
//     stopped renewing its lease for 5 × spec.leaseDurationSeconds as
//     Available=Unknown (waking up with RequeueAfter at the deadline, never
//     polling), keeps the hub taints in step with Available, labels a
//     cluster in no set into "default" (a new one in its first write), and
//     on deletion tears everything down in order behind a finalizer.
//   - The CSR controller watches kube-apiserver-client CSRs labelled with a
//     cluster name and approves an agent's certificate renewal when the
//     requester, the label and the certificate subject all name the same
//     accepted cluster and a SubjectAccessReview allows the requester to
//     renew managedclusters/clientcertificates of that cluster. It never
//     approves a first CSR: a hub admin does that (flotilla accept). Once
//     one is approved for a new cluster, it records the agent it names as
//     the cluster's accepted agent (annotation
//     registration.flotilla.io/accepted-agent), and the cluster controller
//     binds the cluster's RBAC to that agent's user alone: a certificate
//     signed for any other agent of the cluster gets nothing, and only a
//     hub admin replaces the agent (flotilla accept --replace-agent). A
//     join token for one cluster (flotilla init --cluster-name) that made
//     an approved, signed CSR expires five minutes later and is then
//     deleted.
//
// The lease is read, not watched: a renewal changes nothing on the hub (the
// agent, not the hub, reports Available again), and before declaring a
// lease expired the controller reads it from the API server, not the cache.
//
// Choices where the contract is silent: on deletion the agent keeps its
// RoleBinding to the work ClusterRole (held by a finalizer) until its
// ManifestWorks are gone, since it is the agent that removes their
// finalizers; the ClusterRole also allows list and watch on the cluster's
// own ManagedCluster (by name only), which OCM agents use; admission guards
// only turning hubAcceptsClient to true, as OCM does.
//
// Status is written once per reconcile, as a merge patch of what changed
// guarded by the resourceVersion (the agent writes the same conditions
// list); events are emitted only after that write succeeded.
package registration
