package search

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
)

var (
	pods        = searchv1alpha1.SearchResource{Version: "v1", Resource: "pods", Kind: "Pod"}
	deployments = searchv1alpha1.SearchResource{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment"}
	nodes       = searchv1alpha1.SearchResource{Version: "v1", Resource: "nodes", Kind: "Node"}
)

func pod(status map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{
			"name": "web-1", "namespace": "shop", "uid": "u1", "resourceVersion": "7", "labels": map[string]any{"app": "web"},
			"annotations":     map[string]any{"secret": "never indexed"},
			"ownerReferences": []any{map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-abc", "uid": "rs1", "controller": true}},
		},
		"spec": map[string]any{
			"nodeName":       "node-a",
			"initContainers": []any{map[string]any{"name": "init", "image": "busybox:1"}},
			"containers":     []any{map[string]any{"name": "app", "image": "nginx:1.27"}},
		},
		"status": status,
	}}
}

func TestPodStatus(t *testing.T) {
	waiting := func(reason string) map[string]any {
		return map[string]any{"state": map[string]any{"waiting": map[string]any{"reason": reason}}}
	}
	for _, tc := range []struct {
		name   string
		status map[string]any
		want   string
	}{
		{"running and ready", map[string]any{"phase": "Running", "containerStatuses": []any{map[string]any{"ready": true, "state": map[string]any{"running": map[string]any{}}}}}, "Running"},
		{"crash loop before phase", map[string]any{"phase": "Running", "containerStatuses": []any{waiting("CrashLoopBackOff")}}, "CrashLoopBackOff"},
		{"image pull while pending", map[string]any{"phase": "Pending", "containerStatuses": []any{waiting("ImagePullBackOff")}}, "ImagePullBackOff"},
		{"terminated with reason", map[string]any{"phase": "Failed", "containerStatuses": []any{map[string]any{"state": map[string]any{"terminated": map[string]any{"reason": "OOMKilled", "exitCode": int64(137)}}}}}, "OOMKilled"},
		{"terminated without reason", map[string]any{"phase": "Failed", "containerStatuses": []any{map[string]any{"state": map[string]any{"terminated": map[string]any{"exitCode": int64(2)}}}}}, "ExitCode:2"},
		{"init container waiting", map[string]any{"phase": "Pending", "initContainerStatuses": []any{waiting("CrashLoopBackOff")}}, "Init:CrashLoopBackOff"},
		{"evicted", map[string]any{"phase": "Failed", "reason": "Evicted"}, "Evicted"},
		{"only a phase", map[string]any{"phase": "Pending"}, "Pending"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := compactObject(pods, pod(tc.status)).Status; got != tc.want {
				t.Errorf("status %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCompactPod(t *testing.T) {
	got := compactObject(pods, pod(map[string]any{"phase": "Running", "podIP": "10.0.0.5",
		"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}))
	want := searchv1alpha1.Object{
		Version: "v1", Resource: "pods", Kind: "Pod", Namespace: "shop", Name: "web-1", UID: "u1", ResourceVersion: "7",
		Labels: map[string]string{"app": "web"},
		Owner:  &searchv1alpha1.Owner{Kind: "ReplicaSet", Name: "web-abc", UID: "rs1"},
		Images: []string{"busybox:1", "nginx:1.27"}, Status: "Running",
		Conditions: map[string]string{"Ready": "True"},
		Fields:     map[string]string{"spec.nodeName": "node-a", "status.podIP": "10.0.0.5", "status.phase": "Running"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("compact pod (-want +got):\n%s", d)
	}
}

func TestWorkloadAndNodeStatus(t *testing.T) {
	conds := func(kv ...string) map[string]any {
		var cs []any
		for i := 0; i < len(kv); i += 2 {
			cs = append(cs, map[string]any{"type": kv[i], "status": kv[i+1]})
		}
		return map[string]any{"conditions": cs}
	}
	obj := func(kind string, status map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"kind": kind, "metadata": map[string]any{"name": "x", "uid": "u"},
			"spec":   map[string]any{"replicas": int64(2), "template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"image": "app:2"}}}}},
			"status": status}}
	}
	for _, tc := range []struct {
		r    searchv1alpha1.SearchResource
		obj  *unstructured.Unstructured
		want string
	}{
		{deployments, obj("Deployment", conds("Available", "True", "Progressing", "True")), "Available"},
		{deployments, obj("Deployment", conds("Available", "False", "Progressing", "True")), "Progressing"},
		{deployments, obj("Deployment", conds("Available", "False", "Progressing", "False")), "Failed"},
		{nodes, obj("Node", conds("Ready", "True")), "Ready"},
		{nodes, obj("Node", conds("Ready", "False")), "NotReady"},
		{nodes, obj("Node", conds("Ready", "Unknown")), "Unknown"},
		{searchv1alpha1.SearchResource{Group: "apps", Version: "v1", Resource: "statefulsets", Kind: "StatefulSet"}, obj("StatefulSet", map[string]any{"readyReplicas": int64(1)}), "Progressing"},
		{searchv1alpha1.SearchResource{Group: "apps", Version: "v1", Resource: "statefulsets", Kind: "StatefulSet"}, obj("StatefulSet", map[string]any{"readyReplicas": int64(2)}), "Ready"},
		{searchv1alpha1.SearchResource{Group: "batch", Version: "v1", Resource: "jobs", Kind: "Job"}, obj("Job", conds("Complete", "True")), "Complete"},
	} {
		got := compactObject(tc.r, tc.obj)
		if got.Status != tc.want {
			t.Errorf("%s %v: status %q, want %q", tc.r.Kind, tc.obj.Object["status"], got.Status, tc.want)
		}
		if tc.r.Kind != "Node" && !cmp.Equal(got.Images, []string{"app:2"}) {
			t.Errorf("%s: images %v, want [app:2]", tc.r.Kind, got.Images)
		}
	}
}

func TestNormalizeKeepsSecretsMetadataOnly(t *testing.T) {
	for _, r := range []string{"secrets", "configmaps"} {
		if !normalize(searchv1alpha1.SearchResource{Version: "v1", Resource: r, Kind: "X"}).MetadataOnly {
			t.Errorf("%s indexed in full", r)
		}
	}
	if normalize(pods).MetadataOnly {
		t.Error("pods made metadata-only")
	}
}
