// Package render turns a ManifestWorkReplicaSet's template into the
// ManifestWork spec of each chosen cluster: it divides replicas across the
// clusters (spec.replicaDivision) and applies the per-cluster overrides
// (spec.overrides). It is pure: no API calls, so the controller and the CLI
// (to preview) can both use it.
package render
