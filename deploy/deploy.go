package deploy

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// The charts, and the namespaces they install into by default.
const (
	HubChart       = "flotilla-hub"
	AgentChart     = "flotilla-agent"
	HubNamespace   = "open-cluster-management-hub"
	AgentNamespace = "open-cluster-management-agent"
)

//go:embed all:charts
var charts embed.FS

// Chart loads the embedded chart name.
func Chart(name string) (*chart.Chart, error) {
	root := path.Join("charts", name)
	var files []*loader.BufferedFile
	err := fs.WalkDir(charts, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := charts.ReadFile(p)
		if err != nil {
			return err
		}
		files = append(files, &loader.BufferedFile{Name: strings.TrimPrefix(p, root+"/"), Data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", name, err)
	}
	return loader.LoadFiles(files)
}

// ManagedBy is the app.kubernetes.io/managed-by label of what Render
// renders: flotilla join and init install it, and unjoin removes it (Helm
// writes "Helm").
const ManagedBy = "flotilla"

// Release is what a chart's release labels say: app.kubernetes.io/instance
// is Name, app.kubernetes.io/managed-by Service.
type Release struct {
	Name, Namespace, Service string
}

// Render renders chart name into namespace with values over its defaults,
// as `helm install` would (CRDs first), and returns the objects in the
// order Helm installs them: the release named after the chart, managed by
// flotilla (ManagedBy).
func Render(name, namespace string, values map[string]any) ([]*unstructured.Unstructured, error) {
	return RenderRelease(name, Release{Name: name, Namespace: namespace, Service: ManagedBy}, values)
}

// RenderRelease renders chart name as release rel, as `helm install
// --namespace rel.Namespace rel.Name` would with rel.Service "Helm".
func RenderRelease(name string, rel Release, values map[string]any) ([]*unstructured.Unstructured, error) {
	ch, err := Chart(name)
	if err != nil {
		return nil, err
	}
	if err := chartutil.ProcessDependencies(ch, values); err != nil {
		return nil, err
	}
	vals, err := chartutil.ToRenderValues(ch, values, chartutil.ReleaseOptions{Name: rel.Name, Namespace: rel.Namespace, IsInstall: true, Revision: 1}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", name, err)
	}
	if rel.Service != "" {
		vals["Release"].(map[string]any)["Service"] = rel.Service
	}
	rendered, err := engine.Render(ch, vals)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", name, err)
	}
	var objs []*unstructured.Unstructured
	for _, crd := range ch.CRDObjects() {
		o, err := decode(crd.File.Data)
		if err != nil {
			return nil, fmt.Errorf("chart %s, %s: %w", name, crd.Filename, err)
		}
		objs = append(objs, o...)
	}
	names := make([]string, 0, len(rendered))
	for file := range rendered {
		if strings.HasSuffix(file, ".yaml") {
			names = append(names, file)
		}
	}
	sort.Strings(names)
	var templated []*unstructured.Unstructured
	for _, file := range names {
		o, err := decode([]byte(rendered[file]))
		if err != nil {
			return nil, fmt.Errorf("chart %s, %s: %w", name, file, err)
		}
		templated = append(templated, o...)
	}
	sort.SliceStable(templated, func(i, j int) bool { return kindOrder(templated[i]) < kindOrder(templated[j]) })
	return append(objs, templated...), nil
}

// kindOrder is the position of obj's kind in Helm's install order.
func kindOrder(obj *unstructured.Unstructured) int {
	if i := slices.Index(releaseutil.InstallOrder, obj.GetKind()); i >= 0 {
		return i
	}
	return len(releaseutil.InstallOrder)
}

// decode splits a YAML stream into objects, skipping empty documents.
func decode(data []byte) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var m map[string]any
		if err := d.Decode(&m); err != nil {
			if err.Error() == "EOF" {
				return objs, nil
			}
			return nil, err
		}
		if len(m) == 0 {
			continue
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
}
