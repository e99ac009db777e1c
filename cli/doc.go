// Package cli implements `flotilla`, the command line tool that joins
// clusters to a Flotilla hub, in the habits of Open Cluster Management's
// clusteradm.
//
// The registration handshake of the wire contract is split between the two
// sides, and so are the commands:
//
//   - On the hub (admin kubeconfig): `init` creates a bootstrap token, the
//     ClusterRole open-cluster-management:bootstrap bound to the group
//     system:bootstrappers:managedcluster, and makes sure kube-public/cluster-info
//     exists; `get token` prints a join command with a valid token;
//     `accept` approves a cluster's bootstrap CSRs and sets
//     spec.hubAcceptsClient; `deny` clears it; `get clusters` lists clusters.
//   - On the managed cluster (its own kubeconfig): `join` checks the token and
//     the hub's CA, writes the bootstrap kubeconfig Secret, and either runs the
//     agent in the foreground (--run) or installs it as a Deployment; `unjoin`
//     removes the agent again, leaving what it applied.
//
// Without --ca-file, join learns the hub's CA from cluster-info fetched
// without credentials, and trusts it only when the ConfigMap carries a valid
// JWS signature made with the bootstrap token (kubeadm's discovery): a
// man in the middle cannot forge it without knowing the token secret.
//
// Every command writes its result to standard output and progress, notes and
// warnings to standard error, so that `-o json` output can be piped. Errors
// say what failed, where, and what to do about it.
package cli
