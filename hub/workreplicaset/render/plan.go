package render

import (
	corev1 "k8s.io/api/core/v1"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// Cluster is what rendering needs to know of one chosen cluster.
type Cluster struct {
	// Name is the ManagedCluster's name.
	Name string
	// Labels are the ManagedCluster's labels.
	Labels map[string]string
	// Allocatable is the ManagedCluster's status.allocatable.
	Allocatable corev1.ResourceList
}

// Plan returns the ManifestWork spec of every given cluster, keyed by
// cluster name. An error means the overrides or the division can never
// apply as written; its message says which entry and why.
//
// TODO(render): replica division and overrides; for now every cluster gets
// the template unchanged.
func Plan(spec *workv1alpha1.ManifestWorkReplicaSetSpec, clusters []Cluster) (map[string]workv1.ManifestWorkSpec, error) {
	out := make(map[string]workv1.ManifestWorkSpec, len(clusters))
	for _, c := range clusters {
		out[c.Name] = *spec.ManifestWorkTemplate.DeepCopy()
	}
	return out, nil
}
