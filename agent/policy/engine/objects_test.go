package engine

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestLoadObjects(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("crd.yaml", `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Cluster
  names: {kind: Widget, plural: widgets, singular: widget}
  versions: [{name: v1, served: true, storage: true}]
`)
	write("sub/list.json", `{"apiVersion": "v1", "kind": "List", "items": [
  {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "labels": {"x": "1"}}},
  {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "apps"}, "stringData": {"k": "v"}}]}`)
	write("w.yml", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n---\n")
	write("notes.txt", "not read")

	set, err := LoadObjects(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	mapping := func(gvk schema.GroupVersionKind) *meta.RESTMapping {
		t.Helper()
		m, err := set.Mapping(gvk)
		if err != nil {
			t.Fatalf("%s: %v", gvk, err)
		}
		return m
	}

	widgets := mapping(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"})
	if widgets.Resource.Resource != "widgets" || namespaced(widgets) {
		t.Errorf("the CRD's kind: %+v", widgets)
	}
	if w, _ := set.Get(ctx, widgets, "", "w"); w == nil {
		t.Error("widget w not found")
	}
	cms := mapping(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"})
	if a, _ := set.Get(ctx, cms, "default", "a"); a == nil {
		t.Error("a namespaced object without a namespace belongs to default")
	}
	if got, _ := set.List(ctx, cms, "", labels.SelectorFromSet(labels.Set{"x": "1"})); len(got) != 1 {
		t.Errorf("list by label: %d objects", len(got))
	}
	s, _ := set.Get(ctx, mapping(schema.GroupVersionKind{Version: "v1", Kind: "Secret"}), "apps", "s")
	if s == nil || s.Object["data"].(map[string]any)["k"] != "dg==" {
		t.Errorf("stringData must move into data, base64-encoded: %v", s)
	}
	nss, _ := set.List(ctx, mapping(namespaceGVK), "", nil)
	var names []string
	for _, ns := range nss {
		names = append(names, ns.GetName())
	}
	if len(names) != 2 {
		t.Errorf("the namespaces that objects are in exist: %v", names)
	}
	if m := mapping(schema.GroupVersionKind{Version: "v1", Kind: "Endpoints"}); m.Resource.Resource != "endpoints" {
		t.Errorf("Endpoints: %s", m.Resource.Resource)
	}
	if _, err := set.Mapping(schema.GroupVersionKind{Group: "nope.io", Version: "v1", Kind: "Nope"}); !meta.IsNoMatchError(err) {
		t.Errorf("an unknown kind: %v", err)
	}
}

func TestResultsLimit(t *testing.T) {
	cp := policy(t, `
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: Namespace, metadata: {}}`)
	res := Evaluate(context.Background(), cp, objects(t, cluster))
	got := res.Results(2)
	if len(got.Objects) != 2 || got.Omitted != 3 {
		t.Errorf("results: %d objects, %d omitted; want 2 and 3", len(got.Objects), got.Omitted)
	}
}
