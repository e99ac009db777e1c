// Package handshake is the CLI's side of the registration handshake, the
// double opt-in that init, get token, accept, deny, join, unjoin, the
// console and dev up share: join tokens (bootstrap token Secrets) and the
// join command printed with them, the bootstrap RBAC and the signed
// kube-public/cluster-info the hub must carry, the checks a cluster's CSRs
// must pass and AcceptOptions, which approves them and sets
// spec.hubAcceptsClient (watching the hub when it waits for many
// clusters), and the agent objects join installs and unjoin removes.
package handshake
