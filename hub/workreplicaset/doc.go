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
// progressDeadline passed since the write without success. With
// spec.healthCheck, Available also means healthy by package health (status
// feedback values, a CEL expression), so that a release that comes up at
// half capacity fails at progressDeadline. rollout.Decide
// (internal/rollout, shared with the add-on manager), a pure function,
// picks the clusters that get their new spec now: all of them
// (All), up to maxConcurrency in flight (Progressive), or the next decision
// group (ProgressivePerGroup), mandatory decision groups first, each whole
// and without failures. Once more clusters failed than maxFailures, nothing
// more is pushed. Clusters new to a Placement take the same road. Timers
// (minSuccessTime, progressDeadline) are RequeueAfter, never sleeps.
//
// Revisions (a Flotilla extension, api/work/v1alpha1/revision_types.go).
// Each template, overrides and replica division the spec takes is a
// revision: an apps/v1 ControllerRevision owned by the replica set, named
// <name>-<hash of its data>, numbered 1, 2, ..., with its author (the
// replica set's work.flotilla.io/changed-by, which the hub's admission
// sets) and a one-line summary of what changed from the revision before
// (changeSummary). A spec equal to an older revision (an undo) makes no
// new one: that one is renumbered the newest and loses its failed mark.
// The oldest beyond RevisionHistoryLimit go, never the current one nor the
// last complete one before it. Every work written carries the name of the
// revision it was rendered from (work.flotilla.io/revision), in the same
// create or update as its spec. Once the rollout of the current revision
// reached every chosen cluster of every placement and each succeeded, the
// revision is marked complete (work.flotilla.io/complete).
//
// Automatic rollback (spec.rollback; the CRD refuses it unless every
// placementRef's rollout is progressive). When the current revision, not
// complete, failed its gate on failedClusters of the clusters that took it
// (a number, or a share rounded up), it is marked failed
// (work.flotilla.io/failed: the clusters and what their works say) and an
// event RevisionFailed says so. While the current revision carries that
// mark the works are rendered from the last complete revision before it,
// and rollout.Decide moves the clusters back by the placements' own
// strategies: clusters already on it are Updated and never written. A
// cluster that fails on it stops the rollback everywhere (RollbackFailed):
// it is neither retried nor rolled back itself; without a complete
// revision before it nothing is rolled back and the rollout stops
// (NoCompleteRevision). Condition RolledBack says where it stands:
// RollingBack (False), RolledBack (True), RollbackFailed and
// NoCompleteRevision (False), naming the failed revision, its failed
// clusters and the revision rolled back to; it goes when another revision
// becomes current. PlacementRolledOut is then False with the same reason,
// never Complete. Everything lives in the API (the revisions' marks, the
// works' specs and annotations), so a hub that restarts in the middle goes
// on where it was and writes nothing twice. The rollout must be able to
// reach failedClusters failures: keep it at most maxFailures+1. Turning
// spec.rollback off rolls the current revision out again, marked or not.
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
// Status: conditions PlacementVerified, ManifestworkApplied,
// PlacementRolledOut and RolledBack, summary and placementSummary, written once per
// reconcile as a merge patch of what changed; events follow that write.
// Deletion: the finalizer deletes the works; Foreground holds the replica
// set until they are gone, Background releases it at once.
//
// Watches: replica sets; their ManifestWorks and ControllerRevisions (from
// a cache of those that carry the replica-set label only, indexed by it); PlacementDecisions and
// Placements (to the replica sets naming the Placement, by index);
// ManagedClusters whose labels, allocatable or taints change (to the replica
// sets whose decisions hold them, through an index of decisions by cluster,
// and to those with a work in the cluster's namespace). Writes of works go
// through a bounded pool of parallel requests, with a client of their own;
// each write is remembered until the cache shows it (writtenWorks,
// writtenRevisions), so that a rollout never decides on a cache that lags
// its own writes.
package workreplicaset
