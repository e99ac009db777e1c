package render

import (
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// clusterSet is a compiled "clusterNames or clusterSelector".
type clusterSet struct {
	names    map[string]bool
	selector labels.Selector // nil: selects by name only
}

// newClusterSet compiles names and selector; an invalid selector is an
// error that says what is wrong with it.
func newClusterSet(names []string, sel *metav1.LabelSelector) (clusterSet, error) {
	set := clusterSet{names: make(map[string]bool, len(names))}
	for _, n := range names {
		set.names[n] = true
	}
	if sel != nil {
		s, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil {
			return set, fmt.Errorf("clusterSelector is invalid: %w — fix the selector", err)
		}
		set.selector = s
	}
	return set, nil
}

// selects says whether the cluster is named or its labels match.
func (s clusterSet) selects(c Cluster) bool {
	return s.names[c.Name] || (s.selector != nil && s.selector.Matches(labels.Set(c.Labels)))
}

// podKinds are the kinds whose containers images and env overrides change,
// with the path of their pod spec.
var podKinds = map[string][]string{
	"Pod":                   {"spec"},
	"Deployment":            {"spec", "template", "spec"},
	"StatefulSet":           {"spec", "template", "spec"},
	"DaemonSet":             {"spec", "template", "spec"},
	"ReplicaSet":            {"spec", "template", "spec"},
	"ReplicationController": {"spec", "template", "spec"},
	"Job":                   {"spec", "template", "spec"},
	"CronJob":               {"spec", "jobTemplate", "spec", "template", "spec"},
}

// scalableKinds have spec.replicas even when a manifest leaves it out (the
// API server defaults it to 1).
var scalableKinds = map[string]bool{
	"Deployment":            true,
	"StatefulSet":           true,
	"ReplicaSet":            true,
	"ReplicationController": true,
}

// manifest is one template manifest, decoded once.
type manifest struct {
	index int
	obj   map[string]any
	// apiVersion, kind, namespace and name identify it in messages and targets.
	apiVersion, kind, namespace, name string
}

// decodeManifest parses a template manifest into an object.
func decodeManifest(i int, raw []byte) (manifest, error) {
	m := manifest{index: i}
	obj, err := decodeObject(raw)
	if err != nil {
		return m, fmt.Errorf("manifestWorkTemplate.workload.manifests[%d] is not a JSON object: %w", i, err)
	}
	m.obj = obj
	m.apiVersion, _ = obj["apiVersion"].(string)
	m.kind, _ = obj["kind"].(string)
	m.namespace, _ = nested(obj, "metadata", "namespace").(string)
	m.name, _ = nested(obj, "metadata", "name").(string)
	return m, nil
}

// String names the manifest as people write it: Kind ns/name.
func (m manifest) String() string {
	if m.namespace == "" {
		return fmt.Sprintf("manifests[%d] %s %s", m.index, m.kind, m.name)
	}
	return fmt.Sprintf("manifests[%d] %s %s/%s", m.index, m.kind, m.namespace, m.name)
}

// matches says whether the selector picks the manifest; nil picks all.
func (m manifest) matches(t *workv1alpha1.ManifestSelector) bool {
	return t == nil ||
		((t.APIVersion == "" || t.APIVersion == m.apiVersion) &&
			(t.Kind == "" || t.Kind == m.kind) &&
			(t.Namespace == "" || t.Namespace == m.namespace) &&
			(t.Name == "" || t.Name == m.name))
}

// hasContainers says whether images and env overrides apply to it.
func (m manifest) hasContainers() bool { return podKinds[m.kind] != nil }

// hasReplicas says whether replicas overrides and division apply to it: a
// kind known to scale, or any object that sets spec.replicas (custom
// resources).
func (m manifest) hasReplicas() bool {
	return scalableKinds[m.kind] || nested(m.obj, "spec", "replicas") != nil
}

// replicas is the manifest's own spec.replicas, 1 when left out (the
// Kubernetes default for the scalable kinds).
func (m manifest) replicas() (int64, error) {
	v := nested(m.obj, "spec", "replicas")
	if v == nil {
		return 1, nil
	}
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("%s: spec.replicas is %v, not a number — set totalReplicas or fix spec.replicas", m, v)
	}
	i, err := n.Int64()
	if err != nil || i < 0 || i > 1<<31-1 {
		return 0, fmt.Errorf("%s: spec.replicas %s is not a replica count — set totalReplicas or fix spec.replicas", m, n)
	}
	return i, nil
}

// noneMatches starts a message about a selector that matched no manifest
// fit for a change: "target {...} matches no manifest", or for an empty
// target "the template has no manifest".
func noneMatches(t *workv1alpha1.ManifestSelector) string {
	if t == nil {
		return "the template has no manifest"
	}
	return targetString(t) + " matches no manifest"
}

// targetString describes a manifest selector for messages.
func targetString(t *workv1alpha1.ManifestSelector) string {
	if t == nil {
		return "any manifest"
	}
	b, _ := json.Marshal(t)
	return "target " + string(b)
}
