// Package inventory publishes the hub's clusters and placement results in
// the Kubernetes SIG-Multicluster standard APIs, for tools that read those
// rather than OCM's (Kueue's MultiKueue, Argo CD syncers, Headlamp,
// Sveltos):
//
//   - ClusterProfiles (multicluster.x-k8s.io/v1alpha1, KEP-4322): as OCM
//     does, a ManagedClusterSetBinding makes its namespace an inventory, and
//     every ManagedCluster of a set bound there gets a ClusterProfile of the
//     same name in it, owned by cluster manager "flotilla". Its status
//     follows the cluster (ControlPlaneHealthy and Joined from the cluster's
//     conditions, the Kubernetes version, the cluster claims as
//     properties), and its access provider "flotilla" points at the
//     cluster's door in the hub's cluster proxy, with the hub's address and
//     CA as kube-public/cluster-info publishes them to agents, so that a
//     consumer reaches the cluster through the hub with its own hub
//     identity (KEP-5339; see `flotilla credential-plugin`).
//   - the neutral PlacementDecisions (multicluster.x-k8s.io/v1alpha1,
//     KEP-5313): for every Placement, the clusters of its OCM
//     PlacementDecisions, in their order, written again in slices of at
//     most 100 ClusterProfile references, owned by the Placement.
//
// Both are derived data: the controllers rewrite what anyone else changes
// in them, and delete what no longer has a source.
package inventory
