// Package bootstraptoken owns the hub's bootstrap credentials: what an agent
// presents before its cluster is accepted (shared/docs/contract.md,
// Registration step 1), in both forms OCM knows.
//
//   - Bootstrap tokens: Secrets kube-system/bootstrap-token-<id> in group
//     system:bootstrappers:managedcluster, labelled
//     app.kubernetes.io/managed-by=flotilla and app=cluster-manager (the label
//     clusteradm looks for). The rotation controller keeps one that the hub
//     rotates itself: when the newest valid token has no more than the
//     overlap left, it creates one that lives the lifetime, and it deletes
//     the tokens it created once they expire (the tokens flotilla init
//     creates by hand are left to expire). A joined agent authenticates
//     with its client certificate, which it renews with that certificate
//     (contract step 8): no rotation ever reaches it. A token for one
//     cluster (flotilla init --cluster-name) is also labelled
//     registration.flotilla.io/token-cluster and in the extra group
//     ClusterGroup(<cluster>); the registration package holds it to that
//     cluster and retires it after its first join.
//   - The ServiceAccount open-cluster-management/agent-registration-bootstrap,
//     whose TokenRequest tokens `clusteradm get token` hands out.
//
// The ClusterRole open-cluster-management:bootstrap (no more than joining
// needs) is the join path: while it exists, join tokens and the
// ServiceAccount can join. Open (flotilla init) creates the namespace
// open-cluster-management, the ServiceAccount, that ClusterRole and its
// bindings to the token group and to the ServiceAccount, and puts back
// what is missing. `clusteradm delete token` deletes the ClusterRole, the
// ServiceAccount and its binding, which closes the join path, as on OCM:
// the rotation controller then creates no token (a token that cannot join
// would be handed out), and Install, which runs at every hub start, opens
// it unless it was closed: the ClusterRole is missing while its binding to
// the token group, which clusteradm leaves, is there (a new hub has
// neither). JoinPathOpen says which it is, and ClosedMessage says so to
// users.
//
// The rotation controller watches only the token Secrets it created, through
// a cache filtered by label, and the bootstrap ClusterRole; it wakes up
// with RequeueAfter at the next rotation or expiry; its clock is injected,
// so tests never sleep.
package bootstraptoken
