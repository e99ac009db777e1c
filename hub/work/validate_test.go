package work

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

func manifest(s string) workv1.Manifest {
	return workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(s)}}
}

// configMapOfSize is a ConfigMap manifest whose compact JSON is size bytes.
func configMapOfSize(t *testing.T, name string, size int) workv1.Manifest {
	t.Helper()
	build := func(n int) []byte {
		data, err := json.Marshal(map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": "default"},
			"data":     map[string]any{"blob": strings.Repeat("x", n)},
		})
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	raw := build(size - len(build(0)))
	if len(raw) != size {
		t.Fatalf("built %d bytes, want %d", len(raw), size)
	}
	return workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}}
}

func TestValidate(t *testing.T) {
	const cm = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"app","namespace":"default"}}`
	tests := []struct {
		name      string
		manifests []workv1.Manifest
		want      []string
	}{
		{name: "no manifests"},
		{name: "complete manifests", manifests: []workv1.Manifest{manifest(cm), manifest(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"prod"}}`)}},
		{
			name:      "indentation does not count",
			manifests: []workv1.Manifest{manifest("{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"Namespace\",\n  \"metadata\": {\"name\": \"" + strings.Repeat(" ", 10) + "\"}\n}")},
		},
		{
			name:      "missing name, with namespace",
			manifests: []workv1.Manifest{manifest(cm), manifest(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"app-","namespace":"default"}}`)},
			want:      []string{"spec.workload.manifests[1] (ConfigMap in namespace default) has no metadata.name: every manifest must name the object it applies (generateName is not supported)"},
		},
		{
			name:      "no metadata at all",
			manifests: []workv1.Manifest{manifest(`{"apiVersion":"v1","kind":"Namespace"}`)},
			want:      []string{"spec.workload.manifests[0] (Namespace) has no metadata.name: every manifest must name the object it applies (generateName is not supported)"},
		},
		{
			name:      "missing apiVersion and kind",
			manifests: []workv1.Manifest{manifest(`{"metadata":{"name":"app"}}`)},
			want: []string{
				"spec.workload.manifests[0] (app) has no apiVersion: every manifest must be a complete Kubernetes object with apiVersion, kind and metadata.name",
				"spec.workload.manifests[0] (app) has no kind: every manifest must be a complete Kubernetes object with apiVersion, kind and metadata.name",
			},
		},
		{
			name:      "empty kind",
			manifests: []workv1.Manifest{manifest(`{"apiVersion":"v1","kind":"","metadata":{"name":"app","namespace":"ns"}}`)},
			want:      []string{"spec.workload.manifests[0] (ns/app) has no kind: every manifest must be a complete Kubernetes object with apiVersion, kind and metadata.name"},
		},
		{
			name:      "not an object",
			manifests: []workv1.Manifest{manifest(`["a"]`)},
			want:      []string{"spec.workload.manifests[0] is not a JSON object: every manifest must be a complete Kubernetes object"},
		},
		{
			name:      "exactly at the limit",
			manifests: []workv1.Manifest{configMapOfSize(t, "a", 100*1024), configMapOfSize(t, "b", MaxManifestsSize-100*1024)},
		},
		{
			name:      "one byte over the limit",
			manifests: []workv1.Manifest{configMapOfSize(t, "a", 100*1024), configMapOfSize(t, "b", MaxManifestsSize-100*1024+1)},
			want:      []string{"the manifests total 512001 bytes of JSON, over the limit of 512000 bytes (500 KiB); the largest is spec.workload.manifests[1] (ConfigMap default/b, 409601 bytes): split the manifests over several ManifestWorks"},
		},
		{
			name:      "over the limit and incomplete",
			manifests: []workv1.Manifest{configMapOfSize(t, "a", MaxManifestsSize), manifest(`{"apiVersion":"v1","kind":"Secret","metadata":{}}`)},
			want: []string{
				"spec.workload.manifests[1] (Secret) has no metadata.name: every manifest must name the object it applies (generateName is not supported)",
				"the manifests total 512049 bytes of JSON, over the limit of 512000 bytes (500 KiB); the largest is spec.workload.manifests[0] (ConfigMap default/a, 512000 bytes): split the manifests over several ManifestWorks",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, p := range Validate(tt.manifests) {
				got = append(got, p.Describe(SpecPath))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidatorHandle(t *testing.T) {
	valid := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"app","namespace":"default"}}`
	invalid := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"default"}}`
	work := func(manifests ...string) []byte {
		w := workv1.ManifestWork{}
		w.Namespace, w.Name = "cluster1", "app"
		for _, m := range manifests {
			w.Spec.Workload.Manifests = append(w.Spec.Workload.Manifests, manifest(m))
		}
		data, err := json.Marshal(w)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	tests := []struct {
		name       string
		op         admissionv1.Operation
		object     []byte
		old        []byte
		allowed    bool
		wantCode   int32
		wantInMsg  string
		wantFields []string
	}{
		{name: "valid create", op: admissionv1.Create, object: work(valid), allowed: true},
		{
			name: "invalid create", op: admissionv1.Create, object: work(valid, invalid), wantCode: 422,
			wantInMsg:  "ManifestWork cluster1/app is refused: spec.workload.manifests[1] (ConfigMap in namespace default) has no metadata.name",
			wantFields: []string{"spec.workload.manifests[1].metadata.name"},
		},
		{name: "update keeping invalid manifests", op: admissionv1.Update, object: work(invalid), old: work(invalid), allowed: true},
		{name: "update to invalid manifests", op: admissionv1.Update, object: work(invalid), old: work(valid), wantCode: 422, wantInMsg: "has no metadata.name", wantFields: []string{"spec.workload.manifests[0].metadata.name"}},
		{name: "update fixing manifests", op: admissionv1.Update, object: work(valid), old: work(invalid), allowed: true},
		{name: "undecodable", op: admissionv1.Create, object: []byte(`{"spec":3}`), wantCode: 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
				Operation: tt.op, Object: runtime.RawExtension{Raw: tt.object}, OldObject: runtime.RawExtension{Raw: tt.old},
			}}
			resp := Validator{}.Handle(t.Context(), req)
			if resp.Allowed != tt.allowed {
				t.Fatalf("allowed = %t, want %t (%+v)", resp.Allowed, tt.allowed, resp.Result)
			}
			if tt.allowed {
				return
			}
			if resp.Result.Code != tt.wantCode {
				t.Errorf("code = %d, want %d", resp.Result.Code, tt.wantCode)
			}
			if !strings.Contains(resp.Result.Message, tt.wantInMsg) {
				t.Errorf("message %q does not contain %q", resp.Result.Message, tt.wantInMsg)
			}
			if tt.wantFields != nil {
				var fields []string
				for _, c := range resp.Result.Details.Causes {
					fields = append(fields, c.Field)
				}
				if diff := cmp.Diff(tt.wantFields, fields); diff != "" {
					t.Errorf("cause fields (-want +got):\n%s", diff)
				}
			}
		})
	}
}
