// Package workview shows ManifestWorks and ManifestWorkReplicaSets as
// create work, get works and describe work print them: the work table
// with each manifest's conditions, feedback and drift, what a work still
// lacks or is held by, and a replica set's rollout per cluster
// (ReplicaSetView, rendered with the hub's own overrides and division).
package workview
