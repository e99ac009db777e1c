// Package registration keeps a managed cluster registered with its hub: the
// agent side of the contract's double handshake (shared/docs/contract.md,
// "Registration").
//
// Idea: the agent holds one hub credential at a time. It starts from the
// client certificate stored on the spoke; when there is none, or it expired,
// or the bootstrap kubeconfig now names another hub or CA, it joins with the
// bootstrap kubeconfig: it creates its ManagedCluster and a CSR whose private
// key never leaves the process, waits for a hub admin to approve it, and
// stores the result. While a credential holds, a session renews the cluster's
// lease, rotates the certificate when 20–25 % of its life is left (a renewal
// CSR authenticated with the current certificate) and swaps it into the live
// connections without a restart.
//
// Other capabilities run per session: Config.SessionFuncs are started with
// each session's hub configuration (whose certificate follows rotations)
// and stopped when the session ends, so that they never hold a credential
// the agent gave up. The work agent is one.
//
// Holding a certificate of its own, the agent removes the join credentials
// from the bootstrap kubeconfig Secret (keeping the hub's address and CA):
// a join token left on a spoke let whoever read it ask for any cluster's
// name. Joining again after a lost certificate takes a new token.
//
// Owns, on the spoke: Secret hub-kubeconfig-secret in the agent namespace,
// and the credentials of Secret bootstrap-hub-kubeconfig, which it removes.
// On the hub: the cluster's ManagedCluster (created, then only its status),
// its CSRs, and Lease managed-cluster-lease in the cluster namespace.
//
// Watches, on the spoke: Nodes (stripped to their resources) and
// ClusterClaims, which feed the ManagedCluster status. On the hub, once the
// cluster is accepted, it watches its own ManagedCluster by name, which the
// status controller looks at every lease period, and the CSR it is waiting
// for; it reads the ManagedCluster only to learn that it was accepted and
// after a conflict.
//
// Writes ManagedCluster status conditions ManagedClusterJoined and
// ManagedClusterConditionAvailable, status.version, status.capacity,
// status.allocatable and status.clusterClaims, and only when one of them
// changed.
package registration
