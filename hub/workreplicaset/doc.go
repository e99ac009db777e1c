// Package workreplicaset is the hub's ManifestWorkReplicaSet controller
// (shared/docs/contract.md, "ManifestWorkReplicaSet"): it creates one
// ManifestWork from a replica set's template in the namespace of every
// cluster its Placements choose, rolls changes out by each PlacementRef's
// strategy, and removes the works when the replica set goes.
//
// It owns the ManifestWorks named like the replica set and labelled
// work.open-cluster-management.io/manifestworkreplicaset: <ns>.<name> (and
// .../placementname: the Placement that rolls the cluster out). A work of
// that name without the label is someone else's: the controller does not
// take it over, and says so in ManifestworkApplied. Each cluster's spec is
// what package render makes of the template for that cluster (overrides,
// replica division); input render rejects, or a strategy that cannot be
// read, stops all writes, is reported in the conditions and is not retried
// until the spec changes.
//
// Rollout. A cluster is updated when its work's spec equals its rendered
// spec; it succeeded when the work is Applied and Available for its current
// generation for minSuccessTime (counted from the later of those conditions
// and the write, which the work's work.flotilla.io/rollout-time annotation
// records); it failed when Degraded for its current generation, or when
// progressDeadline passed since the write without success. rollout.Decide
// (internal/rollout, shared with the add-on manager), a pure function,
// picks the clusters that get their new spec now: all of them
// (All), up to maxConcurrency in flight (Progressive), or the next decision
// group (ProgressivePerGroup), mandatory decision groups first, each whole
// and without failures. Once more clusters failed than maxFailures, nothing
// more is pushed. Clusters new to a Placement take the same road. Timers
// (minSuccessTime, progressDeadline) are RequeueAfter, never sleeps.
//
// Safe failover (a Flotilla extension, package hub/failover). A work whose
// cluster left the decisions while the hub tainted it for its health
// (cluster.open-cluster-management.io/unreachable or .../unavailable) is
// kept until a replacement, a chosen cluster whose work is new since the
// taint, reports Available; without a replacement, until the taint is
// older than the failover grace of the Placement that rolled it out
// (annotation cluster.flotilla.io/failover-grace, default 5m). Then it is
// deleted in the ordinary way, which the agent carries out when its
// cluster is back. Nothing is written for the tainted cluster meanwhile.
// The conditions' messages name the works kept and what they wait for;
// the summary counts the works of the chosen clusters only. A cluster that
// comes back (its Available condition turns True and the taint goes) keeps
// its work until the Placements have decided since, at most 30 s: their
// next decision usually chooses it again, and deleting the work in between
// would delete and re-create its objects on the spoke.
//
// Status: conditions PlacementVerified, ManifestworkApplied and
// PlacementRolledOut, summary and placementSummary, written once per
// reconcile as a merge patch of what changed; events follow that write.
// Deletion: the finalizer deletes the works; Foreground holds the replica
// set until they are gone, Background releases it at once.
//
// Watches: replica sets; their ManifestWorks (from a cache of works that
// carry the replica-set label only, indexed by it); PlacementDecisions and
// Placements (to the replica sets naming the Placement, by index);
// ManagedClusters whose labels, allocatable or taints change (to the replica
// sets whose decisions hold them, through an index of decisions by cluster,
// and to those with a work in the cluster's namespace). Writes of works go
// through a bounded pool of parallel requests, with a client of their own;
// each write is remembered until the cache shows it (writtenWorks), so that
// a rollout never decides on a cache that lags its own writes.
package workreplicaset
