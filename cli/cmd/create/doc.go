// Package create is `flotilla create KIND`, a file per kind as kubectl's
// create is: work (a ManifestWork per cluster, or a
// ManifestWorkReplicaSet for the clusters of a Placement, from -f and
// flags, checked as the hub's admission does and waited for with --wait),
// placement, clusterset and policy.
package create
