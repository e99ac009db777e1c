// Package rollout is `flotilla rollout history|undo|pause|resume|status`,
// kubectl rollout's verbs for a ManifestWorkReplicaSet rolled out across
// the fleet. The hub keeps the revisions (ControllerRevisions the replica
// set owns, see api/work/v1alpha1/revision_types.go) and does the rolling
// out; these commands read them (history, status), write the replica
// set's spec back from one (undo: the hub renumbers that revision and
// rolls it out by the strategy), and set or remove the paused annotation
// (pause, resume). Status waits as `create work --wait` does
// (workview.RolloutWait), and also through a rollback the hub makes.
package rollout
