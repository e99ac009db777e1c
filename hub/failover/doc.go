// Package failover decides what the hub keeps on a cluster that left a
// Placement's decisions because the hub tainted it for its health
// (cluster.open-cluster-management.io/unreachable: its agent stopped
// renewing the lease; .../unavailable: its agent reports the cluster's API
// server unhealthy). The ManifestWorkReplicaSet controller keeps such a
// cluster's ManifestWork, and the policy propagator its replicated policy,
// by the same rule (Keep): until a replacement, a chosen cluster whose copy
// is new since the taint, is ready; without one, until the taint is older
// than the Placement's failover grace (Grace, the annotation
// cluster.flotilla.io/failover-grace, DefaultGrace without it). A cluster
// whose taint went keeps what it has until its Placements have decided
// since (ReturnWait): their next decision usually chooses it again.
//
// The package is pure: the controllers read the objects and write what
// follows; nothing here talks to the API server.
package failover
