package render

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

func TestPlanErrors(t *testing.T) {
	eu := []string{"eu-1"}
	deploy := &workv1alpha1.ManifestSelector{Kind: "Deployment"}
	cm := &workv1alpha1.ManifestSelector{Kind: "ConfigMap"}
	cases := []struct {
		name      string
		overrides []workv1alpha1.ClusterOverride
		division  *workv1alpha1.ReplicaDivision
		template  []string // default: templateManifests
		want      string
	}{{
		name: "replace of a missing key names the override, cluster, manifest and operation",
		overrides: []workv1alpha1.ClusterOverride{
			{Name: "labels", ClusterNames: eu, Target: cm, Labels: map[string]string{"a": "b"}},
			{Name: "eu-image", ClusterNames: eu, Target: deploy, JSONPatch: []workv1alpha1.JSONPatchOperation{
				{Op: "add", Path: "/spec/paused", Value: patchValue("true")},
				{Op: "replace", Path: "/spec/foo", Value: patchValue("1")},
			}},
		},
		want: `overrides[1] "eu-image" on cluster eu-1: manifests[0] Deployment default/hello: jsonPatch[1]: path /spec/foo: missing key — the path must exist for replace`,
	}, {
		name: "remove of a missing key",
		overrides: []workv1alpha1.ClusterOverride{{ClusterNames: eu, Target: cm,
			JSONPatch: []workv1alpha1.JSONPatchOperation{{Op: "remove", Path: "/data/nope"}}}},
		want: `overrides[0] on cluster eu-1: manifests[1] ConfigMap default/settings: jsonPatch[0]: path /data/nope: missing key — the path must exist for remove`,
	}, {
		name: "add under a missing parent",
		overrides: []workv1alpha1.ClusterOverride{{ClusterNames: eu, Target: cm,
			JSONPatch: []workv1alpha1.JSONPatchOperation{{Op: "add", Path: "/spec/x/y", Value: patchValue("1")}}}},
		want: `jsonPatch[0]: path /spec/x/y: missing parent — add creates only the last step of the path; add its parent first`,
	}, {
		name: "a failed test",
		overrides: []workv1alpha1.ClusterOverride{{ClusterNames: eu, Target: cm,
			JSONPatch: []workv1alpha1.JSONPatchOperation{{Op: "test", Path: "/data/n", Value: patchValue(`"2"`)}}}},
		want: `jsonPatch[0]: path /data/n: test failed — the manifest's value there is not "2"`,
	}, {
		name: "a list index out of range",
		overrides: []workv1alpha1.ClusterOverride{{ClusterNames: eu, Target: deploy,
			JSONPatch: []workv1alpha1.JSONPatchOperation{{Op: "replace", Path: "/spec/template/spec/containers/5/image", Value: patchValue(`"x"`)}}}},
		want: `jsonPatch[0]: path /spec/template/spec/containers/5/image: missing key — the path must exist for replace`,
	}, {
		name: "a move from a missing path",
		overrides: []workv1alpha1.ClusterOverride{{ClusterNames: eu, Target: cm,
			JSONPatch: []workv1alpha1.JSONPatchOperation{{Op: "move", From: "/data/none", Path: "/data/other"}}}},
		want: `jsonPatch[0]: from /data/none, path /data/other: missing key — from must exist, and so must the parent of path`,
	}, {
		name: "a path that is not a JSON pointer fails whatever the clusters",
		overrides: []workv1alpha1.ClusterOverride{{Name: "p", Target: cm,
			JSONPatch: []workv1alpha1.JSONPatchOperation{{Op: "add", Path: "data/x", Value: patchValue("1")}}}},
		want: `overrides[0] "p": jsonPatch[0]: path "data/x" is not a JSON pointer — start it with /, e.g. /spec/replicas`,
	}, {
		name: "add without a value",
		overrides: []workv1alpha1.ClusterOverride{{ClusterNames: eu, Target: cm,
			JSONPatch: []workv1alpha1.JSONPatchOperation{{Op: "add", Path: "/data/x"}}}},
		want: `overrides[0]: jsonPatch[0]: add /data/x has no value — set value (any JSON but null)`,
	}, {
		name: "copy without from",
		overrides: []workv1alpha1.ClusterOverride{{ClusterNames: eu, Target: cm,
			JSONPatch: []workv1alpha1.JSONPatchOperation{{Op: "copy", Path: "/data/x"}}}},
		want: `overrides[0]: jsonPatch[0]: copy /data/x has no from — set from to the source path`,
	}, {
		name: "an unknown op",
		overrides: []workv1alpha1.ClusterOverride{{ClusterNames: eu, Target: cm,
			JSONPatch: []workv1alpha1.JSONPatchOperation{{Op: "merge", Path: "/data"}}}},
		want: `overrides[0]: jsonPatch[0]: op "merge" is not add, remove, replace, move, copy or test`,
	}, {
		name:      "a target that matches nothing, even if it selects no cluster",
		overrides: []workv1alpha1.ClusterOverride{{Name: "typo", Target: &workv1alpha1.ManifestSelector{Kind: "Deploymnet"}, Labels: map[string]string{"a": "b"}}},
		want:      `overrides[0] "typo": target {"kind":"Deploymnet"} matches no manifest of the template — check its apiVersion, kind, namespace and name against the template's manifests`,
	}, {
		name:      "a target whose name fits but namespace does not",
		overrides: []workv1alpha1.ClusterOverride{{Target: &workv1alpha1.ManifestSelector{Namespace: "prod", Name: "hello"}, Labels: map[string]string{"a": "b"}}},
		want:      `overrides[0]: target {"namespace":"prod","name":"hello"} matches no manifest of the template`,
	}, {
		name: "an invalid selector",
		overrides: []workv1alpha1.ClusterOverride{{Name: "bad", Labels: map[string]string{"a": "b"},
			ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "not a valid value!"}}}},
		want: `overrides[0] "bad": clusterSelector is invalid: `,
	}, {
		name:      "an override that changes nothing",
		overrides: []workv1alpha1.ClusterOverride{{Name: "empty", ClusterNames: eu}},
		want:      `overrides[0] "empty": changes nothing — set at least one of images, replicas, env, labels, annotations or jsonPatch`,
	}, {
		name:      "images aimed at a manifest without containers",
		overrides: []workv1alpha1.ClusterOverride{{ClusterNames: eu, Target: cm, Images: []workv1alpha1.ImageOverride{{Image: "x"}}}},
		want:      `overrides[0]: images and env: target {"kind":"ConfigMap"} matches no manifest with containers`,
	}, {
		name:      "a container that does not exist",
		overrides: []workv1alpha1.ClusterOverride{{ClusterNames: eu, Target: deploy, Images: []workv1alpha1.ImageOverride{{Container: "helo", Tag: "2"}}}},
		want:      `overrides[0]: images[0]: no container named "helo" in the targeted manifests (they have init, hello, proxy) — fix the container name or leave it empty for every container`,
	}, {
		name:      "image and tag both set",
		overrides: []workv1alpha1.ClusterOverride{{ClusterNames: eu, Images: []workv1alpha1.ImageOverride{{Image: "x", Tag: "2"}}}},
		want:      `overrides[0]: images[0]: set exactly one of image and tag`,
	}, {
		name:      "env without a name",
		overrides: []workv1alpha1.ClusterOverride{{ClusterNames: eu, Env: []workv1alpha1.EnvOverride{{Container: "hello", Value: "1"}}}},
		want:      `overrides[0]: env[0]: name is empty — name the variable`,
	}, {
		name:      "env for a container that does not exist",
		overrides: []workv1alpha1.ClusterOverride{{ClusterNames: eu, Target: &workv1alpha1.ManifestSelector{Kind: "Pod"}, Env: []workv1alpha1.EnvOverride{{Container: "hello", Name: "A"}}}},
		want:      `overrides[0]: env[0]: no container named "hello" in the targeted manifests (they have web)`,
	}, {
		name:      "replicas aimed at a manifest without them",
		overrides: []workv1alpha1.ClusterOverride{{ClusterNames: eu, Target: &workv1alpha1.ManifestSelector{Kind: "CronJob"}, Replicas: ptr.To[int32](2)}},
		want:      `overrides[0]: replicas: target {"kind":"CronJob"} matches no manifest with spec.replicas`,
	}, {
		name:     "a division aimed at a manifest without replicas",
		division: &workv1alpha1.ReplicaDivision{Target: &workv1alpha1.ManifestSelector{Kind: "ConfigMap"}},
		want:     `replicaDivision: target {"kind":"ConfigMap"} matches no manifest with spec.replicas — fix the target`,
	}, {
		name:     "a division whose target matches nothing",
		division: &workv1alpha1.ReplicaDivision{Target: &workv1alpha1.ManifestSelector{Name: "nope"}},
		want:     `replicaDivision: target {"name":"nope"} matches no manifest with spec.replicas`,
	}, {
		name:     "a template without anything to divide",
		division: &workv1alpha1.ReplicaDivision{},
		template: templateManifests[configMap : configMap+1],
		want:     `replicaDivision: the template has no manifest with spec.replicas — fix the target, or add a Deployment, StatefulSet, ReplicaSet or object with spec.replicas`,
	}, {
		name: "an infeasible division names the manifest and the numbers",
		division: &workv1alpha1.ReplicaDivision{Target: deploy, TotalReplicas: ptr.To[int32](3),
			Weights: []workv1alpha1.ClusterWeight{{ClusterSelector: &metav1.LabelSelector{}, Weight: 1, MinReplicas: ptr.To[int32](2)}}},
		want: `replicaDivision: manifests[0] Deployment default/hello: cannot divide 3 replicas across 3 clusters: their minReplicas add up to 6, more than 3 — lower minReplicas or raise totalReplicas`,
	}, {
		name:     "spec.replicas that is not a count",
		division: &workv1alpha1.ReplicaDivision{},
		template: []string{`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":"three"}}`},
		want:     `replicaDivision: manifests[0] Deployment d: spec.replicas is three, not a number — set totalReplicas or fix spec.replicas`,
	}, {
		name:      "a manifest that is not an object",
		overrides: []workv1alpha1.ClusterOverride{{ClusterNames: eu, Labels: map[string]string{"a": "b"}}},
		template:  []string{`[1,2]`},
		want:      `manifestWorkTemplate.workload.manifests[0] is not a JSON object`,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			manifests := tc.template
			if manifests == nil {
				manifests = templateManifests
			}
			var ws workv1.ManifestWorkSpec
			for _, m := range manifests {
				ws.Workload.Manifests = append(ws.Workload.Manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(m)}})
			}
			spec := &workv1alpha1.ManifestWorkReplicaSetSpec{ManifestWorkTemplate: ws, Overrides: tc.overrides, ReplicaDivision: tc.division}
			got, err := Plan(spec, fleet)
			if err == nil {
				t.Fatalf("Plan succeeded with %d specs; want an error containing %q", len(got), tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %q\nwant it to contain %q", err, tc.want)
			}
		})
	}
}
