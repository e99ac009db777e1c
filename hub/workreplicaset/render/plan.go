package render

import (
	"fmt"
	"reflect"

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
// Each cluster's spec starts as a copy of the template. The overrides that
// select the cluster apply in list order, then replica division sets
// spec.replicas of its targets, so division wins over a replicas override.
// A manifest that nothing changes keeps the template's bytes, so specs
// compare equal as long as the template and the inputs do. Pass every
// chosen cluster, not a rollout's current batch: the division depends on
// the whole set.
func Plan(spec *workv1alpha1.ManifestWorkReplicaSetSpec, clusters []Cluster) (map[string]workv1.ManifestWorkSpec, error) {
	out := make(map[string]workv1.ManifestWorkSpec, len(clusters))
	if len(spec.Overrides) == 0 && spec.ReplicaDivision == nil {
		for _, c := range clusters {
			out[c.Name] = *spec.ManifestWorkTemplate.DeepCopy()
		}
		return out, nil
	}
	manifests, err := decodeTemplate(spec.ManifestWorkTemplate)
	if err != nil {
		return nil, err
	}
	overrides, err := compileOverrides(spec.Overrides, manifests)
	if err != nil {
		return nil, err
	}
	divided, err := divideAll(spec.ReplicaDivision, manifests, clusters)
	if err != nil {
		return nil, fmt.Errorf("replicaDivision: %w", err)
	}
	for _, c := range clusters {
		ws, err := render(spec.ManifestWorkTemplate, manifests, overrides, divided, c)
		if err != nil {
			return nil, err
		}
		out[c.Name] = ws
	}
	return out, nil
}

// decodeTemplate decodes every manifest of the template.
func decodeTemplate(t workv1.ManifestWorkSpec) ([]manifest, error) {
	out := make([]manifest, len(t.Workload.Manifests))
	for i, m := range t.Workload.Manifests {
		d, err := decodeManifest(i, m.Raw)
		if err != nil {
			return nil, err
		}
		out[i] = d
	}
	return out, nil
}

// render builds one cluster's spec. Only the manifests an override or the
// division touches are decoded and encoded again.
func render(t workv1.ManifestWorkSpec, manifests []manifest, overrides []override, divided map[int]map[string]int32, c Cluster) (workv1.ManifestWorkSpec, error) {
	ws := *t.DeepCopy()
	for i, m := range manifests {
		count, isDivided := divided[i][c.Name]
		var touching []*override
		for j := range overrides {
			if o := &overrides[j]; o.clusters.selects(c) && o.targetsManifest(i) {
				touching = append(touching, o)
			}
		}
		if len(touching) == 0 && !isDivided {
			continue
		}
		w := &working{obj: deepCopyJSON(m.obj).(map[string]any)}
		for _, o := range touching {
			if err := o.apply(w, m); err != nil {
				return ws, fmt.Errorf("%s on cluster %s: %s: %w", o.where, c.Name, m, err)
			}
		}
		obj, err := w.object()
		if err != nil {
			return ws, fmt.Errorf("cluster %s: %s: %w", c.Name, m, err)
		}
		if isDivided {
			if err := setReplicas(obj, int64(count)); err != nil {
				return ws, fmt.Errorf("replicaDivision on cluster %s: %s: %w", c.Name, m, err)
			}
		}
		if reflect.DeepEqual(obj, m.obj) {
			// Nothing changed in effect: keep the template's bytes, which
			// encoding again would reorder.
			continue
		}
		raw, err := w.bytes()
		if err != nil {
			return ws, fmt.Errorf("cluster %s: %s: %w", c.Name, m, err)
		}
		ws.Workload.Manifests[i].Raw = raw
		ws.Workload.Manifests[i].Object = nil
	}
	return ws, nil
}

// divideAll divides the replicas of every manifest the division targets
// that has replicas, each on its own, and returns the counts by manifest
// index and cluster. Like an override's change, it is an error only when it
// fits none of its targets.
func divideAll(div *workv1alpha1.ReplicaDivision, manifests []manifest, clusters []Cluster) (map[int]map[string]int32, error) {
	if div == nil {
		return nil, nil
	}
	var targets []manifest
	for _, m := range manifests {
		if m.matches(div.Target) && m.hasReplicas() {
			targets = append(targets, m)
		}
	}
	if len(targets) == 0 {
		return nil, fmt.Errorf("%s with spec.replicas — fix the target, or add a Deployment, StatefulSet, ReplicaSet or object with spec.replicas", noneMatches(div.Target))
	}
	if len(clusters) == 0 {
		// Nothing to divide among; still reject weights that can never work.
		_, err := sharesOf(div, nil)
		return nil, err
	}
	out := make(map[int]map[string]int32, len(targets))
	for _, m := range targets {
		total := int64(0)
		if div.TotalReplicas != nil {
			total = int64(*div.TotalReplicas)
		} else {
			var err error
			if total, err = m.replicas(); err != nil {
				return nil, err
			}
		}
		counts, err := Divide(div, int32(total), clusters)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m, err)
		}
		out[m.index] = counts
	}
	return out, nil
}
