package create

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseWorkSource(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		want    []string // compact JSON of each manifest
		work    bool
		labels  map[string]string
		wantErr string
	}{
		{
			name: "one manifest",
			data: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
			want: []string{`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`},
		},
		{
			name: "several documents, empty ones and comments skipped",
			data: "---\n# settings\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: prod\n---\n# nothing here\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: prod\n",
			want: []string{
				`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"prod"}}`,
				`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"prod"}}`,
			},
		},
		{
			name: "a List counts as its items",
			data: `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"a"}},{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"b"}}]}`,
			want: []string{
				`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"a"}}`,
				`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"b"}}`,
			},
		},
		{
			name:   "a ManifestWork gives its spec and labels",
			data:   "apiVersion: work.open-cluster-management.io/v1\nkind: ManifestWork\nmetadata:\n  name: other\n  namespace: cluster1\n  labels: {team: a}\nspec:\n  workload:\n    manifests:\n    - apiVersion: v1\n      kind: Namespace\n      metadata: {name: prod}\n",
			want:   []string{`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"prod"}}`},
			work:   true,
			labels: map[string]string{"team": "a"},
		},
		{
			name:    "a ManifestWork among other documents",
			data:    "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\napiVersion: work.open-cluster-management.io/v1\nkind: ManifestWork\nmetadata: {name: w}\n",
			wantErr: "app.yaml: document 2 is a ManifestWork, but the file holds 2 documents: give either one ManifestWork or plain Kubernetes manifests",
		},
		{
			name:    "a ManifestWork with a misspelt field",
			data:    "apiVersion: work.open-cluster-management.io/v1\nkind: ManifestWork\nmetadata: {name: w}\nspec:\n  workloads: {}\n",
			wantErr: `app.yaml: the ManifestWork does not match work.open-cluster-management.io/v1: error unmarshaling JSON: while decoding JSON: json: unknown field "workloads"`,
		},
		{
			name:    "a manifest without a name",
			data:    "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  namespace: prod\n",
			wantErr: "the hub would refuse this work: document 2 of app.yaml (ConfigMap in namespace prod) has no metadata.name",
		},
		{
			name:    "a ManifestWork whose manifest has no kind",
			data:    "apiVersion: work.open-cluster-management.io/v1\nkind: ManifestWork\nmetadata: {name: w}\nspec:\n  workload:\n    manifests:\n    - apiVersion: v1\n      metadata: {name: prod}\n",
			wantErr: "the hub would refuse this work: spec.workload.manifests[0] of app.yaml (prod) has no kind",
		},
		{
			name:    "a single manifest is named by the file",
			data:    "apiVersion: v1\nmetadata: {name: a}\n",
			wantErr: "the hub would refuse this work: app.yaml (a) has no kind",
		},
		{
			name:    "too large",
			data:    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n  blob: " + strings.Repeat("x", 600*1024) + "\n",
			wantErr: "over the limit of 512000 bytes (500 KiB); the largest is app.yaml (ConfigMap big, 614483 bytes)",
		},
		{name: "empty", data: "---\n# nothing\n", wantErr: "app.yaml holds no manifests"},
		{name: "a scalar", data: "hello\n", wantErr: "app.yaml: document 1 is not a Kubernetes object"},
		{name: "bad YAML", data: "a: [\n", wantErr: "app.yaml: document 1 is not valid YAML"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, err := parseWorkSource("app.yaml", []byte(tt.data))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range src.spec.Workload.Manifests {
				var buf bytes.Buffer
				if err := json.Compact(&buf, m.Raw); err != nil {
					t.Fatal(err)
				}
				got = append(got, buf.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("manifests (-want +got):\n%s", diff)
			}
			if src.fromWork != tt.work {
				t.Errorf("fromWork = %t, want %t", src.fromWork, tt.work)
			}
			if diff := cmp.Diff(tt.labels, src.labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadWorkSourceFromStdin(t *testing.T) {
	src, err := readWorkSource("-", strings.NewReader("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  namespace: x\n"))
	if err == nil || err.Error() != "the hub would refuse this work: standard input (ConfigMap in namespace x) has no metadata.name: every manifest must name the object it applies (generateName is not supported)" {
		t.Fatalf("got %v, %v", src, err)
	}
	src, err = readWorkSource("-", strings.NewReader("apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n"))
	if err != nil || len(src.spec.Workload.Manifests) != 1 {
		t.Fatalf("got %v, %v", src, err)
	}
}
