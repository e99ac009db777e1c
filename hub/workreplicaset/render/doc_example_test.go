package render

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// TestDocumentedExample renders the ManifestWorkReplicaSet of
// docs/overrides.md and checks what the page says each cluster gets.
func TestDocumentedExample(t *testing.T) {
	page, err := os.ReadFile("../../../docs/overrides.md")
	if err != nil {
		t.Fatalf("reading the page: %v", err)
	}
	_, rest, ok := strings.Cut(string(page), "```yaml\n")
	block, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("docs/overrides.md has no yaml block")
	}
	var mwrs *workv1alpha1.ManifestWorkReplicaSet
	for _, doc := range strings.Split(block, "\n---\n") {
		if strings.Contains(doc, "kind: ManifestWorkReplicaSet") {
			mwrs = &workv1alpha1.ManifestWorkReplicaSet{}
			if err := yaml.UnmarshalStrict([]byte(doc), mwrs); err != nil {
				t.Fatalf("the example does not parse: %v", err)
			}
		}
	}
	if mwrs == nil {
		t.Fatal("the yaml block has no ManifestWorkReplicaSet")
	}
	clusters := []Cluster{
		{Name: "cluster1", Labels: map[string]string{"env": "prod"}},
		{Name: "cluster2", Labels: map[string]string{"env": "prod"}},
	}
	got, err := Plan(&mwrs.Spec, clusters)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	want := map[string]map[string]any{
		"cluster1": {
			"spec.replicas":                          float64(2),
			"spec.template.spec.containers[0].image": "mirror.eu.example.com/asmacdo/busybox:latest",
			"spec.template.spec.containers[0].env":   []any{map[string]any{"name": "REGION", "value": "eu"}},
			"metadata.labels":                        map[string]any{"region": "eu"},
		},
		"cluster2": {
			"spec.replicas":                          float64(1),
			"spec.template.spec.containers[0].image": "quay.io/asmacdo/busybox",
			"spec.template.spec.containers[0].env":   nil,
			"metadata.labels":                        nil,
		},
	}
	for cluster, fields := range want {
		obj := decoded(t, got[cluster].Workload.Manifests[0].Raw)
		for path, value := range fields {
			if d := cmp.Diff(value, field(obj, path)); d != "" {
				t.Errorf("%s: %s (-want +got):\n%s", cluster, path, d)
			}
		}
	}
}
