// Package clusterset is the hub side of ManagedClusterSets and
// ManagedClusterSetBindings (shared/docs/contract.md, "Placement").
//
// It owns the two sets the hub keeps, "default" (clusters labelled
// cluster.open-cluster-management.io/clusterset=default, which every
// cluster without that label gets) and "global" (a LabelSelector matching
// every cluster): it creates them, creates them again when they are
// deleted, and puts their spec back when it is changed. It writes the
// ClusterSetEmpty condition of every set and the Bound condition of every
// binding. The clusterset label of ManagedClusters that lack it is written
// by the registration controller (hub/registration), in the same write as
// a new cluster's finalizer.
//
// Two controllers run in the hub manager:
//
//   - The set controller watches ManagedClusterSets and ManagedClusters
//     (creation, deletion and label changes only, since only labels decide
//     membership) and counts each set's members.
//   - The binding controller watches ManagedClusterSetBindings and the sets
//     they name; a binding is Bound while its set exists and its name equals
//     spec.clusterSet.
//
// Install, called by hub.Prepare, installs two ValidatingAdmissionPolicies
// evaluated by the API server itself. The first guards set membership: a
// ManagedCluster may be created with the clusterset label, or have it
// changed, only by a user allowed create on
// cluster.open-cluster-management.io managedclustersets/join for the new
// set (and, on a change, for the old one). A missing label counts as
// "default", so that labelling a cluster into "default" is no change. The
// second guards bindings: a binding must be named after its set, and only a
// user allowed create on managedclustersets/bind for that set may create
// one. Members of system:masters and the hub's own identity pass both.
//
// Membership is computed by Selector, a pure function that the placement
// scheduler uses too.
package clusterset
