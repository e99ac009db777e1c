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
//   - Work, on the hub: `create work` wraps manifests (or takes a
//     ManifestWork's spec) into a ManifestWork in each named cluster's
//     namespace, after checking the manifests as the hub's admission does
//     and every cluster before writing anything; `get works` shows each
//     work's conditions and, per manifest, its conditions, status feedback
//     and drift corrections; `delete work` deletes one and can wait for the
//     agent to remove what it applied.
//   - Placement, on the hub: `create clusterset` makes a ManagedClusterSet;
//     `clusterset set` labels clusters into it, `clusterset bind|unbind`
//     creates or deletes its ManagedClusterSetBinding in a namespace;
//     `get clustersets` shows each set's bound namespaces and members.
//     `create placement` builds a Placement from flags (sets, label
//     selectors, count, prioritizers) and can wait for its clusters; `get
//     placements` shows the chosen clusters and the hub's message.
//
// `dev up`, `dev status` and `dev down` run a whole fleet on one machine for
// development: flotilla-hub, flotilla-dev-cluster processes (simulated
// clusters, package devcluster) and `flotilla join --run` agents, started
// detached with their output in log files, then init, join and accept as
// above. A state file in the dev directory records the processes (pid and
// start time, so that a reused pid is never mistaken for one of them).
//
// Without --ca-file, join learns the hub's CA from cluster-info fetched
// without credentials, and trusts it only when the ConfigMap carries a valid
// JWS signature made with the bootstrap token (kubeadm's discovery): a
// man in the middle cannot forge it without knowing the token secret.
//
// Every command writes its result to standard output and progress, notes and
// warnings to standard error, so that `-o json` output can be piped. Errors
// say what failed, where, and what to do about it.
//
// # Layout
//
// The tree reads like the command line, as kubectl's pkg/cmd/<verb> and
// clusteradm's do:
//
//   - cli (this package): the root command only: the global flags
//     (--kubeconfig, --context, -v), the help groups, Run and the streams.
//     It builds the tree from the command packages and finishes it (the
//     kind verbs' help, the examples of cobra's own commands, name
//     completion).
//   - cli/cmd/<command>: one package per top-level command or command
//     group, named by its words: accept, deny, clusterset, console,
//     create, delete, describe, get, init, join, unjoin, kubeconfig,
//     credentialplugin, dev, policy, version. Each has NewCommand; each
//     command's options, flags and run are in its own files, and a verb's
//     kinds are files of its package (create/work.go, get/placements.go).
//     A command package never imports another (layout_test.go checks it).
//   - cli/cmdutil: what two or more commands use: the global options and
//     clients, -o and printers, progress, errors, completion, the
//     --clusters vocabulary, hub and webhook waiting, columns, selectors.
//     Its sub-packages hold the nouns several commands share:
//     cmdutil/handshake (join tokens, bootstrap RBAC, cluster-info, CSR
//     acceptance, the agent join installs) and cmdutil/workview (how works
//     and replica sets are shown).
//   - cli/console: the web console that `flotilla console` serves.
//
// No CLI file is longer than 400 lines (layout_test.go checks that too).
package cli
