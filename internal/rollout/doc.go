// Package rollout decides, one step at a time, which clusters of a
// Placement receive a new spec under OCM's rollout strategies (All,
// Progressive, ProgressivePerGroup, with mandatory decision groups,
// maxFailures, minSuccessTime and progressDeadline). It is pure: the
// clusters' states and the time in, the decision out. The
// ManifestWorkReplicaSet controller rolls out works with it, the add-on
// manager an add-on's desired configs.
package rollout
