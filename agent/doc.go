// Package agent runs a Flotilla agent: the one process per managed cluster
// that registers the cluster with the hub and then pulls its work.
//
// It links only controller-runtime and client-go, never k8s.io/kubernetes,
// so that it stays small. Each capability (registration, work, policy) lives
// in a package of its own below this one, mirroring the hub.
//
// Run prepares the spoke (the agent namespace, and the agent-side CRDs such
// as ClusterClaim where they are missing), starts one controller-runtime
// manager on the spoke, whose cache holds only what the controllers watch
// (Nodes stripped to their resources, ClusterClaims; never Secrets), and
// runs registration beside it. With each hub session registration starts
// the work agent (package work), which applies the cluster's ManifestWorks,
// and the add-on registration (package addon), which gets the cluster's
// add-ons their hub certificates and reports their leases.
// On the hub the agent caches nothing beyond its own cluster's namespace.
package agent
