// Package render turns a ManifestWorkReplicaSet's template into the
// ManifestWork spec of each chosen cluster: it applies the per-cluster
// overrides (spec.overrides) and divides replicas across the clusters
// (spec.replicaDivision). It is pure: no API calls, so the controller and
// the CLI (to preview) can both use it.
//
// For each cluster, the template is copied, the overrides that select the
// cluster apply in list order (typed changes, then the JSON patch), and the
// division sets spec.replicas last. Targets are matched against the
// template's manifests, and everything that can be checked without a
// cluster is checked up front, so a typo fails the same way whichever
// clusters are chosen. A manifest nothing changes keeps the template's
// bytes, so a rendered spec compares equal as long as its inputs do.
//
// Division (Divide) computes the exact proportional split within each
// cluster's limits with rational arithmetic, then rounds by largest
// remainder with ties to the lower cluster name: the counts always add up
// to the total and do not depend on the order clusters are listed in.
package render
