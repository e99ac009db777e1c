package render

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// The template's manifests, by index. The Deployment is the example one
// (no spec.replicas) with a sidecar and an init container added.
const (
	deployment = iota
	configMap
	statefulSet
	cronJob
	pod
)

var templateManifests = []string{
	`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"hello","namespace":"default"},
	  "spec":{"selector":{"matchLabels":{"app":"hello"}},"template":{"metadata":{"labels":{"app":"hello"}},
	  "spec":{"initContainers":[{"name":"init","image":"busybox:1.36"}],
	  "containers":[{"name":"hello","image":"quay.io/asmacdo/busybox","command":["sh","-c","echo \"Hello, Kubernetes!\" && sleep 3600"],
	                 "env":[{"name":"MODE","value":"dev"},{"name":"POD","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}]},
	                {"name":"proxy","image":"registry.example.com:5000/proxy:1.0@sha256:abc"}]}}}}`,
	`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings","namespace":"default"},"data":{"big":"x","n":"1"}}`,
	`{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"db","namespace":"data"},
	  "spec":{"replicas":4,"template":{"spec":{"containers":[{"name":"db","image":"postgres:16"}]}}}}`,
	`{"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"report","namespace":"default"},
	  "spec":{"schedule":"@daily","jobTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"report","image":"report:2"}]}}}}}}`,
	`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"},"spec":{"containers":[{"name":"web","image":"nginx"}]}}`,
}

// template returns a template spec with the manifests above.
func template() workv1.ManifestWorkSpec {
	var ws workv1.ManifestWorkSpec
	for _, m := range templateManifests {
		ws.Workload.Manifests = append(ws.Workload.Manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(m)}})
	}
	return ws
}

// fleet is three clusters: two prod (eu, us) and one dev.
var fleet = []Cluster{
	{Name: "eu-1", Labels: map[string]string{"env": "prod", "region": "eu"}},
	{Name: "us-1", Labels: map[string]string{"env": "prod", "region": "us"}},
	{Name: "dev-1", Labels: map[string]string{"env": "dev"}},
}

// field reads a value by a dotted path with [i] list steps, e.g.
// spec.template.spec.containers[0].image; nil when missing.
func field(obj any, path string) any {
	for _, step := range strings.Split(path, ".") {
		name, idx, hasIdx := strings.Cut(step, "[")
		m, ok := obj.(map[string]any)
		if !ok {
			return nil
		}
		obj = m[name]
		if hasIdx {
			i, _ := strconv.Atoi(strings.TrimSuffix(idx, "]"))
			l, ok := obj.([]any)
			if !ok || i >= len(l) {
				return nil
			}
			obj = l[i]
		}
	}
	return obj
}

// decoded parses one rendered manifest; numbers come back as float64.
func decoded(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatalf("rendered manifest is not JSON: %v\n%s", err, raw)
	}
	return obj
}

// check is an expected value at a path of one manifest.
type check struct {
	manifest int
	path     string
	want     any // compared after a JSON round trip: numbers are float64
}

// sel is a label selector matching the labels.
func sel(kv ...string) *metav1.LabelSelector {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return &metav1.LabelSelector{MatchLabels: m}
}

// patchValue is a JSON patch value.
func patchValue(js string) *runtime.RawExtension { return &runtime.RawExtension{Raw: []byte(js)} }

func TestPlan(t *testing.T) {
	image := func(container, img, tag string) workv1alpha1.ImageOverride {
		return workv1alpha1.ImageOverride{Container: container, Image: img, Tag: tag}
	}
	cases := []struct {
		name      string
		overrides []workv1alpha1.ClusterOverride
		division  *workv1alpha1.ReplicaDivision
		// checks per cluster; every manifest not checked for a cluster must
		// keep the template's bytes exactly.
		checks map[string][]check
	}{{
		name: "whole image for every container of one cluster's Deployment, init containers included",
		overrides: []workv1alpha1.ClusterOverride{{Name: "eu-image", ClusterNames: []string{"eu-1"},
			Target: &workv1alpha1.ManifestSelector{Kind: "Deployment"}, Images: []workv1alpha1.ImageOverride{image("", "eu.example.com/app:1", "")}}},
		checks: map[string][]check{"eu-1": {
			{deployment, "spec.template.spec.initContainers[0].image", "eu.example.com/app:1"},
			{deployment, "spec.template.spec.containers[0].image", "eu.example.com/app:1"},
			{deployment, "spec.template.spec.containers[1].image", "eu.example.com/app:1"},
			{deployment, "spec.template.spec.containers[0].command[2]", `echo "Hello, Kubernetes!" && sleep 3600`},
		}},
	}, {
		name: "only the tag of one named container; a digest goes with the old tag",
		overrides: []workv1alpha1.ClusterOverride{{ClusterNames: []string{"us-1"},
			Images: []workv1alpha1.ImageOverride{image("proxy", "", "1.5")}}},
		checks: map[string][]check{"us-1": {
			{deployment, "spec.template.spec.containers[1].image", "registry.example.com:5000/proxy:1.5"},
			{deployment, "spec.template.spec.containers[0].image", "quay.io/asmacdo/busybox"},
		}},
	}, {
		name: "an empty target reaches every kind with containers: StatefulSet, CronJob's job template, Pod",
		overrides: []workv1alpha1.ClusterOverride{{ClusterNames: []string{"dev-1"},
			Images: []workv1alpha1.ImageOverride{image("", "", "canary")}}},
		checks: map[string][]check{"dev-1": {
			{deployment, "spec.template.spec.initContainers[0].image", "busybox:canary"},
			{deployment, "spec.template.spec.containers[0].image", "quay.io/asmacdo/busybox:canary"},
			{statefulSet, "spec.template.spec.containers[0].image", "postgres:canary"},
			{cronJob, "spec.jobTemplate.spec.template.spec.containers[0].image", "report:canary"},
			{pod, "spec.containers[0].image", "nginx:canary"},
		}},
	}, {
		name:      "replicas with an empty target set every scalable manifest, adding spec.replicas where left out",
		overrides: []workv1alpha1.ClusterOverride{{ClusterSelector: sel("env", "prod"), Replicas: ptr.To[int32](7)}},
		checks: map[string][]check{
			"eu-1": {{deployment, "spec.replicas", float64(7)}, {statefulSet, "spec.replicas", float64(7)}},
			"us-1": {{deployment, "spec.replicas", float64(7)}, {statefulSet, "spec.replicas", float64(7)}},
		},
	}, {
		name: "env replaces by name (dropping valueFrom) and appends new names, in one container",
		overrides: []workv1alpha1.ClusterOverride{{ClusterNames: []string{"eu-1"}, Target: &workv1alpha1.ManifestSelector{Name: "hello"},
			Env: []workv1alpha1.EnvOverride{{Container: "hello", Name: "POD", Value: "fixed"}, {Container: "hello", Name: "REGION", Value: "eu"}}}},
		checks: map[string][]check{"eu-1": {
			{deployment, "spec.template.spec.containers[0].env", []any{
				map[string]any{"name": "MODE", "value": "dev"},
				map[string]any{"name": "POD", "value": "fixed"},
				map[string]any{"name": "REGION", "value": "eu"},
			}},
			{deployment, "spec.template.spec.containers[1].env", nil},
			{deployment, "spec.template.spec.initContainers[0].env", nil},
		}},
	}, {
		name: "env without a container reaches every container",
		overrides: []workv1alpha1.ClusterOverride{{ClusterNames: []string{"eu-1"}, Target: &workv1alpha1.ManifestSelector{Kind: "Pod"},
			Env: []workv1alpha1.EnvOverride{{Name: "A", Value: "1"}}}},
		checks: map[string][]check{"eu-1": {
			{pod, "spec.containers[0].env", []any{map[string]any{"name": "A", "value": "1"}}},
		}},
	}, {
		name: "labels and annotations land in metadata, creating the maps",
		overrides: []workv1alpha1.ClusterOverride{{ClusterNames: []string{"us-1"},
			Target:      &workv1alpha1.ManifestSelector{APIVersion: "v1", Kind: "ConfigMap", Namespace: "default", Name: "settings"},
			Labels:      map[string]string{"region": "us"},
			Annotations: map[string]string{"note": "<us>"}}},
		checks: map[string][]check{"us-1": {
			{configMap, "metadata.labels", map[string]any{"region": "us"}},
			{configMap, "metadata.annotations", map[string]any{"note": "<us>"}},
			{configMap, "data", map[string]any{"big": "x", "n": "1"}},
		}},
	}, {
		name: "a JSON patch runs after the typed changes of the same override",
		overrides: []workv1alpha1.ClusterOverride{{ClusterNames: []string{"eu-1"}, Target: &workv1alpha1.ManifestSelector{Kind: "StatefulSet"},
			Replicas: ptr.To[int32](5),
			JSONPatch: []workv1alpha1.JSONPatchOperation{
				{Op: "test", Path: "/spec/replicas", Value: patchValue("5")},
				{Op: "add", Path: "/spec/template/spec/nodeSelector", Value: patchValue(`{"zone":"a"}`)},
				{Op: "copy", From: "/metadata/name", Path: "/metadata/labels"},
				{Op: "remove", Path: "/metadata/namespace"},
			}}},
		checks: map[string][]check{"eu-1": {
			{statefulSet, "spec.replicas", float64(5)},
			{statefulSet, "spec.template.spec.nodeSelector", map[string]any{"zone": "a"}},
			{statefulSet, "metadata.labels", "db"},
			{statefulSet, "metadata.namespace", nil},
		}},
	}, {
		name: "overrides apply in list order: the later one wins",
		overrides: []workv1alpha1.ClusterOverride{
			{ClusterSelector: sel("env", "prod"), Target: &workv1alpha1.ManifestSelector{Kind: "Pod"}, Labels: map[string]string{"tier": "prod", "keep": "yes"}},
			{ClusterNames: []string{"us-1"}, Target: &workv1alpha1.ManifestSelector{Kind: "Pod"}, Labels: map[string]string{"tier": "us"}},
		},
		checks: map[string][]check{
			"eu-1": {{pod, "metadata.labels", map[string]any{"tier": "prod", "keep": "yes"}}},
			"us-1": {{pod, "metadata.labels", map[string]any{"tier": "us", "keep": "yes"}}},
		},
	}, {
		name: "clusterNames or clusterSelector: either selects",
		overrides: []workv1alpha1.ClusterOverride{{ClusterNames: []string{"dev-1"}, ClusterSelector: sel("region", "eu"),
			Target: &workv1alpha1.ManifestSelector{Kind: "Pod"}, Labels: map[string]string{"x": "y"}}},
		checks: map[string][]check{
			"eu-1":  {{pod, "metadata.labels.x", "y"}},
			"dev-1": {{pod, "metadata.labels.x", "y"}},
		},
	}, {
		name: "a selector with expressions; an empty selector selects every cluster",
		overrides: []workv1alpha1.ClusterOverride{
			{ClusterSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"prod"}}}},
				Target: &workv1alpha1.ManifestSelector{Kind: "Pod"}, Labels: map[string]string{"a": "1"}},
			{ClusterSelector: &metav1.LabelSelector{}, Target: &workv1alpha1.ManifestSelector{Kind: "CronJob"}, Labels: map[string]string{"b": "2"}},
		},
		checks: map[string][]check{
			"eu-1":  {{cronJob, "metadata.labels.b", "2"}},
			"us-1":  {{cronJob, "metadata.labels.b", "2"}},
			"dev-1": {{pod, "metadata.labels.a", "1"}, {cronJob, "metadata.labels.b", "2"}},
		},
	}, {
		name: "an override that changes nothing in effect keeps the template's bytes",
		overrides: []workv1alpha1.ClusterOverride{{ClusterSelector: &metav1.LabelSelector{}, Target: &workv1alpha1.ManifestSelector{Kind: "Pod"},
			Images: []workv1alpha1.ImageOverride{image("web", "nginx", "")}}},
	}, {
		name: "a division's target may match manifests without replicas; only those with replicas divide",
		division: &workv1alpha1.ReplicaDivision{Target: &workv1alpha1.ManifestSelector{Namespace: "default"}, TotalReplicas: ptr.To[int32](5),
			Weights: []workv1alpha1.ClusterWeight{{ClusterSelector: sel("env", "prod"), Weight: 1, MaxReplicas: ptr.To[int32](1)}}},
		checks: map[string][]check{
			"eu-1":  {{deployment, "spec.replicas", float64(1)}},
			"us-1":  {{deployment, "spec.replicas", float64(1)}},
			"dev-1": {{deployment, "spec.replicas", float64(3)}},
		},
	}, {
		name:      "an override with neither names nor selector selects no cluster",
		overrides: []workv1alpha1.ClusterOverride{{Labels: map[string]string{"x": "y"}}},
	}, {
		name: "replicas divided 2:1 across prod, with dev at weight 0",
		division: &workv1alpha1.ReplicaDivision{Target: &workv1alpha1.ManifestSelector{Kind: "Deployment"}, TotalReplicas: ptr.To[int32](3),
			DefaultWeight: ptr.To[int32](0),
			Weights:       []workv1alpha1.ClusterWeight{{ClusterNames: []string{"eu-1"}, Weight: 2}, {ClusterNames: []string{"us-1"}, Weight: 1}}},
		checks: map[string][]check{
			"eu-1":  {{deployment, "spec.replicas", float64(2)}},
			"us-1":  {{deployment, "spec.replicas", float64(1)}},
			"dev-1": {{deployment, "spec.replicas", float64(0)}},
		},
	}, {
		name: "each manifest divides its own spec.replicas; division wins over a replicas override",
		overrides: []workv1alpha1.ClusterOverride{{ClusterNames: []string{"eu-1"}, Replicas: ptr.To[int32](9), Labels: map[string]string{"o": "1"},
			Target: &workv1alpha1.ManifestSelector{Kind: "StatefulSet"}}},
		division: &workv1alpha1.ReplicaDivision{},
		checks: map[string][]check{
			// Deployment: 1 (the default) over three equal weights; StatefulSet: 4.
			"eu-1":  {{deployment, "spec.replicas", float64(0)}, {statefulSet, "spec.replicas", float64(1)}, {statefulSet, "metadata.labels.o", "1"}},
			"us-1":  {{deployment, "spec.replicas", float64(0)}, {statefulSet, "spec.replicas", float64(1)}},
			"dev-1": {{deployment, "spec.replicas", float64(1)}, {statefulSet, "spec.replicas", float64(2)}},
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := &workv1alpha1.ManifestWorkReplicaSetSpec{ManifestWorkTemplate: template(), Overrides: tc.overrides, ReplicaDivision: tc.division}
			before := spec.DeepCopy()
			got, err := Plan(spec, fleet)
			if err != nil {
				t.Fatalf("Plan: %v", err)
			}
			if d := cmp.Diff(before, spec); d != "" {
				t.Fatalf("Plan changed its input:\n%s", d)
			}
			if len(got) != len(fleet) {
				t.Fatalf("Plan returned %d clusters, want %d", len(got), len(fleet))
			}
			for _, c := range fleet {
				ws := got[c.Name]
				if n := len(ws.Workload.Manifests); n != len(templateManifests) {
					t.Fatalf("%s: %d manifests, want %d", c.Name, n, len(templateManifests))
				}
				touched := map[int]bool{}
				for _, ch := range tc.checks[c.Name] {
					touched[ch.manifest] = true
					obj := decoded(t, ws.Workload.Manifests[ch.manifest].Raw)
					if d := cmp.Diff(ch.want, field(obj, ch.path)); d != "" {
						t.Errorf("%s: manifests[%d] %s (-want +got):\n%s", c.Name, ch.manifest, ch.path, d)
					}
				}
				for i, m := range ws.Workload.Manifests {
					obj := decoded(t, m.Raw)
					// Order is kept: each position holds the template's kind and name.
					if want := decoded(t, []byte(templateManifests[i])); field(obj, "kind") != field(want, "kind") || field(obj, "metadata.name") != field(want, "metadata.name") {
						t.Errorf("%s: manifests[%d] is %v %v, want %v %v", c.Name, i, field(obj, "kind"), field(obj, "metadata.name"), field(want, "kind"), field(want, "metadata.name"))
					}
					if !touched[i] && !bytes.Equal(m.Raw, []byte(templateManifests[i])) {
						t.Errorf("%s: manifests[%d] changed though nothing targets it there:\n%s", c.Name, i, m.Raw)
					}
				}
			}
		})
	}
}

func TestPlanWithoutExtensionsCopiesTheTemplate(t *testing.T) {
	spec := &workv1alpha1.ManifestWorkReplicaSetSpec{ManifestWorkTemplate: template()}
	got, err := Plan(spec, fleet)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	for _, c := range fleet {
		if d := cmp.Diff(spec.ManifestWorkTemplate, got[c.Name]); d != "" {
			t.Errorf("%s: spec differs from the template:\n%s", c.Name, d)
		}
	}
}

func TestPlanIsStable(t *testing.T) {
	spec := &workv1alpha1.ManifestWorkReplicaSetSpec{
		ManifestWorkTemplate: template(),
		Overrides: []workv1alpha1.ClusterOverride{{ClusterSelector: sel("env", "prod"),
			Labels: map[string]string{"a": "1", "b": "2", "c": "3"}, Env: []workv1alpha1.EnvOverride{{Name: "X", Value: "y"}}}},
		ReplicaDivision: &workv1alpha1.ReplicaDivision{TotalReplicas: ptr.To[int32](10)},
	}
	first, err := Plan(spec, fleet)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	for range 20 {
		again, err := Plan(spec, reversed(fleet))
		if err != nil {
			t.Fatalf("Plan: %v", err)
		}
		if d := cmp.Diff(first, again); d != "" {
			t.Fatalf("a second Plan differs:\n%s", d)
		}
	}
}

func TestPlanWithoutClusters(t *testing.T) {
	spec := &workv1alpha1.ManifestWorkReplicaSetSpec{ManifestWorkTemplate: template(), ReplicaDivision: &workv1alpha1.ReplicaDivision{}}
	got, err := Plan(spec, nil)
	if err != nil || len(got) != 0 {
		t.Fatalf("Plan with no clusters = %v, %v; want an empty map", got, err)
	}
}

func TestRetag(t *testing.T) {
	cases := []struct{ image, tag, want string }{
		{"nginx", "1.27", "nginx:1.27"},
		{"nginx:1.25", "1.27", "nginx:1.27"},
		{"localhost:5000/app", "2", "localhost:5000/app:2"},
		{"localhost:5000/app:1", "2", "localhost:5000/app:2"},
		{"quay.io/org/app@sha256:aaa", "3", "quay.io/org/app:3"},
		{"quay.io/org/app:1@sha256:aaa", "sha256:bbb", "quay.io/org/app@sha256:bbb"},
		{"app:1", "@sha256:ccc", "app@sha256:ccc"},
	}
	for _, tc := range cases {
		if got := retag(tc.image, tc.tag); got != tc.want {
			t.Errorf("retag(%q, %q) = %q, want %q", tc.image, tc.tag, got, tc.want)
		}
	}
}
