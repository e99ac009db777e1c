package query

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
	"github.com/flotilla-io/flotilla/hub/search/store"
)

func req(t *testing.T, key string, op selection.Operator, values ...string) labels.Requirement {
	t.Helper()
	r, err := labels.NewRequirement(key, op, values)
	if err != nil {
		t.Fatal(err)
	}
	return *r
}

func TestParse(t *testing.T) {
	allKinds := indexedKinds(searchv1alpha1.DefaultResources)
	for _, tc := range []struct {
		q    string
		want func(t *testing.T) Terms
	}{
		{q: "", want: func(*testing.T) Terms { return Terms{} }},
		{q: "kind=Pod status=CrashLoopBackOff", want: func(*testing.T) Terms {
			return Terms{Query: store.Query{Kinds: []string{"Pod"}, Statuses: []string{"CrashLoopBackOff"}}}
		}},
		{q: "kind=pod,deployment namespace=prod name=web cluster=c1,c2", want: func(*testing.T) Terms {
			return Terms{Query: store.Query{Kinds: []string{"pod", "deployment"}, Namespaces: []string{"prod"}, Names: []string{"web"}}, Clusters: []string{"c1", "c2"}}
		}},
		{q: "image=nginx:1.2,redis owner=ReplicaSet/web-5d4f", want: func(*testing.T) Terms {
			return Terms{Query: store.Query{Images: []string{"nginx:1.2", "redis"}, OwnerKind: "ReplicaSet", OwnerName: "web-5d4f"}}
		}},
		{q: "owner=web", want: func(*testing.T) Terms { return Terms{Query: store.Query{OwnerName: "web"}} }},
		{q: "  web   group=core ", want: func(*testing.T) Terms {
			return Terms{Query: store.Query{NameContains: "web", Groups: []string{""}}}
		}},
		{q: "app=web tier!=db env=prod,dev zone!=a,b label:name=x app.kubernetes.io/name=shop", want: func(t *testing.T) Terms {
			return Terms{Query: store.Query{Labels: labels.Requirements{
				req(t, "app", selection.Equals, "web"), req(t, "tier", selection.NotEquals, "db"),
				req(t, "env", selection.In, "prod", "dev"), req(t, "zone", selection.NotIn, "a", "b"),
				req(t, "name", selection.Equals, "x"), req(t, "app.kubernetes.io/name", selection.Equals, "shop"),
			}}}
		}},
		{q: "kind!=Secret,ConfigMap", want: func(*testing.T) Terms {
			var kinds []string
			for _, k := range allKinds {
				if k != "Secret" && k != "ConfigMap" {
					kinds = append(kinds, k)
				}
			}
			return Terms{Query: store.Query{Kinds: kinds}}
		}},
		{q: "kind=Pod,Secret kind!=secret", want: func(*testing.T) Terms { return Terms{Query: store.Query{Kinds: []string{"Pod"}}} }},
		{q: "kind=Pod kind!=Pod", want: func(*testing.T) Terms { return Terms{Nothing: true} }},
		{q: "group!=core,apps", want: func(*testing.T) Terms {
			return Terms{Query: store.Query{Groups: []string{"batch", "networking.k8s.io"}}}
		}},
		{q: "cluster!=c3", want: func(*testing.T) Terms { return Terms{NotClusters: []string{"c3"}} }},
	} {
		t.Run(tc.q, func(t *testing.T) {
			got, err := Parse(tc.q, searchv1alpha1.DefaultResources)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tc.want(t), got, cmpopts.EquateEmpty(), cmp.Comparer(func(a, b labels.Requirement) bool { return a.String() == b.String() })); diff != "" {
				t.Errorf("Parse (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ q, want string }{
		{"kind=Widget", `query term "kind=Widget": kind Widget is not indexed by search (indexed: Pod, Deployment, StatefulSet, DaemonSet, Job, Service, Ingress, Node, Namespace, ConfigMap, Secret); to index it, add it to spec.resources of SearchConfig default`},
		{"group=example.com", `query term "group=example.com": group example.com is not indexed by search (indexed: core, apps, batch, networking.k8s.io); to index it, add it to spec.resources of SearchConfig default`},
		{"status!=Running", `query term "status!=Running": status does not take != (only kind, group, cluster do): name the values you want, status=a,b`},
		{"kind=", `query term "kind=": kind= has no value: write kind=<value>`},
		{"=Pod", `query term "=Pod": a term needs a key before =, e.g. kind=Pod`},
		{"kind==Pod", `query term "kind==Pod": write one = (or !=): kind=Pod`},
		{"kind=Pod,", `query term "kind=Pod,": an empty value in the list: separate values with one comma, no spaces`},
		{"kind=Pod kind=Node", `query term "kind=Node": kind= appears twice: list the values in one term, kind=a,b`},
		{"web api", `query term "api": only one free word searches names, and "web" is one already: use name=<exact name> for an exact name`},
		{"owner=a,b", `query term "owner=a,b": owner takes one value: owner=<Kind>/<name> or owner=<name>`},
		{"owner=/web", `query term "owner=/web": write the owner as <Kind>/<name> or <name>, e.g. owner=ReplicaSet/web-5d4f`},
		{"bad!", `query term "bad!": a free word is part of a name: write key=value to select by anything else`},
		{"-app=web", `query term "-app=web": not a label selector (keys other than kind, group, namespace, name, cluster, image, status, owner are labels): key: Invalid value: "-app": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`},
	} {
		t.Run(tc.q, func(t *testing.T) {
			_, err := Parse(tc.q, searchv1alpha1.DefaultResources)
			if err == nil || err.Error() != tc.want {
				t.Errorf("Parse(%q) = %v\nwant %s", tc.q, err, tc.want)
			}
		})
	}
}
