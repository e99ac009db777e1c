// Package policy is the hub's policy propagator (shared/docs/contract.md,
// "Policy"): it copies root Policies into the namespaces of the clusters
// their Placements chose, and rolls the compliance those clusters report
// back up into the root's status.
//
// A root Policy in namespace ns is bound by a PlacementBinding in ns whose
// placementRef is a Placement and whose subjects name the Policy, or a
// PolicySet in ns that lists it. For each cluster in the PlacementDecisions
// of those Placements, it owns one replicated Policy <ns>.<name> in the
// cluster's hub namespace, labelled with the cluster name, the cluster
// namespace and the root (RootPolicyLabel: <ns>.<name>), carrying the
// root's labels, annotations and spec: the agent applies the
// remediationAction override. Hub templates ({{hub ... hub}}) are resolved
// per cluster by package templates before the copy is written; a template
// that does not resolve is copied as written with the
// hub-templates-error annotation (which the agent reports) and a Warning
// event on the root. What hub templates read is watched object by object
// (refWatches: one metadata-only watch per ConfigMap or Secret read, no
// cache of their data; values are read from the API server once per
// reconcile), and a cluster's new labels resolve its templated copies
// again. See docs/policy-templates.md. A dependency on a PolicySet becomes,
// in the copies, one dependency per policy of the set (which only the hub
// can read), and a change of the set's list copies its dependents again.
// Copies are found by that label, never
// by owner references across namespaces; a copy whose cluster left the
// decisions, whose binding or root went, or whose root is disabled is
// deleted, but for failover (package hub/failover, as the replica sets'
// works): a cluster that left while the hub tainted it unreachable or
// unavailable keeps its copy, unwritten, until a replacement's copy has
// reported its compliance or, without one, for the longest failover grace
// of the root's Placements, and a cluster back from an outage keeps it
// until the Placements have decided since. A finalizer on the root deletes its copies before it goes; a
// missing root is left alone, so copies made by hand are not touched. A
// root whose namespace and name are longer than 62 characters together
// (its copies' "<ns>.<name>" would not fit a label value's 63) is refused
// at admission by Validator, as OCM's webhook does; one stored without it
// is not copied, its status.details says why, and a Warning event repeats
// it. Validator also refuses a Policy with a field its schema does not
// know, naming the field: the CRD keeps unknown fields so that it sees them.
//
// It writes the status of a root that is or was bound: placement[]
// (binding, placement, and policySet when bound through one), status[] (per cluster, the compliant
// of its copy) and compliant, rolled up by RollUp. The status is written
// once per reconcile as a merge patch of what changed; a ComplianceChanged
// event follows that write.
//
// SetReconciler writes PolicySets' status: the bindings that name them,
// and the compliance of their policies rolled up with OCM's
// statusMessage.
//
// The propagator watches Policies (a root itself; a copy maps to its root by label),
// PlacementBindings (to the policies they name, directly or through a
// PolicySet, before and after a change), PlacementDecisions (to the
// policies bound to their Placement), PolicySets (to the policies they
// list, before and after a change), ManagedClusters whose labels change
// (to the roots with hub templates copied there) or whose taints change
// (to the roots with a copy there), Placements (read for their failover
// grace, from the cache) and the objects hub
// templates read. SetReconciler watches PolicySets, root Policies and
// PlacementBindings.
package policy
