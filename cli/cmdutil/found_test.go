package cmdutil

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// printed is the part of PrintFound's output that the test reads.
type printed struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name,omitempty"`
	} `json:"metadata"`
	Items []printed `json:"items,omitempty"`
}

func TestPrintFound(t *testing.T) {
	gvk := clusterv1.GroupVersion.WithKind("ManagedCluster")
	clusters := func(names ...string) []clusterv1.ManagedCluster {
		var items []clusterv1.ManagedCluster
		for _, n := range names {
			items = append(items, clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{
				Name:          n,
				ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "flotilla"}},
			}})
		}
		return items
	}
	object := func(apiVersion, kind, name string) printed {
		p := printed{APIVersion: apiVersion, Kind: kind}
		p.Metadata.Name = name
		return p
	}
	const clusterAPI, workAPI = "cluster.open-cluster-management.io/v1", "work.open-cluster-management.io/v1"
	work := []workv1.ManifestWork{{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: "hello"}}}
	tests := []struct {
		name  string
		objs  []clusterv1.ManagedCluster
		one   bool
		mixed bool
		want  printed
	}{
		{
			name: "one named object is the object itself",
			objs: clusters("c1"), one: true,
			want: object(clusterAPI, "ManagedCluster", "c1"),
		},
		{
			name: "one object of a list stays a list",
			objs: clusters("c1"),
			want: printed{APIVersion: clusterAPI, Kind: "ManagedClusterList", Items: []printed{object(clusterAPI, "ManagedCluster", "c1")}},
		},
		{
			name: "two objects, one asked for, are a list",
			objs: clusters("c1", "c2"), one: true,
			want: printed{APIVersion: clusterAPI, Kind: "ManagedClusterList", Items: []printed{object(clusterAPI, "ManagedCluster", "c1"), object(clusterAPI, "ManagedCluster", "c2")}},
		},
		{
			name: "nothing found is an empty list",
			want: printed{APIVersion: clusterAPI, Kind: "ManagedClusterList", Items: []printed{}},
		},
		{
			name: "objects of several kinds are a v1 List",
			objs: clusters("c1"), mixed: true,
			want: printed{APIVersion: "v1", Kind: "List", Items: []printed{object(clusterAPI, "ManagedCluster", "c1"), object(workAPI, "ManifestWork", "hello")}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, listKind := AsFound(tt.objs, gvk), ListKind(gvk)
			if tt.mixed {
				objs, listKind = append(objs, AsFound(work, workv1.GroupVersion.WithKind("ManifestWork"))...), MixedList
			}
			for _, format := range []string{OutputJSON, OutputYAML} {
				var out bytes.Buffer
				if err := PrintFound(&out, format, objs, listKind, tt.one); err != nil {
					t.Fatal(err)
				}
				if strings.Contains(out.String(), "managedFields") {
					t.Errorf("%s output holds managedFields:\n%s", format, out.String())
				}
				var got printed
				if err := yaml.Unmarshal(out.Bytes(), &got); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("%s output (-want +got):\n%s", format, diff)
				}
			}
		})
	}
}
