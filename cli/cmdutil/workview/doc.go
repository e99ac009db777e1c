// Package workview shows ManifestWorks and ManifestWorkReplicaSets as
// create work, get works, describe work and rollout print them: the work
// table with each manifest's conditions, feedback and drift, what a work
// still lacks or is held by, a replica set's rollout per cluster
// (ReplicaSetView, rendered with the hub's own overrides and division),
// its revisions (Revision, read from the ControllerRevisions the hub
// keeps), the wait for its rollout that create work --wait and rollout
// status share (RolloutWait, which also follows a rollback), and the
// pause annotation that rollout pause|resume and the console set.
package workview
