// Package describe is `flotilla describe KIND NAME`, a file per kind:
// cluster, clusterset, placement, policy and work (a
// ManifestWorkReplicaSet's rollout per cluster, or one cluster's
// ManifestWork), each with its spec, status, conditions and what it
// relates to, or as JSON or YAML.
package describe
