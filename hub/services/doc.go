// Package services is the hub's side of multi-cluster services (KEP-1645):
// it merges, per cluster set, what the member clusters export, and gives
// each member's agent read access to its own set's merge and nothing else.
//
// It owns, on the hub:
//   - the ImportedServices in each exclusive ManagedClusterSet's namespace
//     (mcs.SetNamespace): for every <namespace>.<name> that a member
//     exports, the merge of the members' ExportedServices (ports the union
//     by the KEP's rules, every other property from the oldest export),
//     with every exporting cluster, its generation, whether it is
//     available and, while it is, its endpoints. Deleted when no member
//     exports the service any more;
//   - the status of every ExportedService (the cluster set it is imported
//     into, the Conflict and InClusterSet conditions), written only when
//     it changes, never on an endpoint change;
//   - the set namespaces themselves, owned by their ManagedClusterSet, and
//     in each a RoleBinding per accepted member cluster to the shared
//     ClusterRole ImporterClusterRole (get, list, watch importedservices),
//     bound to the cluster's accepted agent as registration binds it;
//   - the admission policy that keeps an agent's ExportedServices labelled
//     with its own cluster and the service they describe.
//
// It watches ExportedServices in every namespace, ImportedServices,
// ManagedClusters (the clusterset label, the Available condition,
// acceptance and the accepted agent) and ManagedClusterSets.
//
// The ExportedServices themselves are written by each cluster's agent
// (package agent/services) in its cluster's namespace; registration grants
// it that (the shared registration ClusterRole).
package services
