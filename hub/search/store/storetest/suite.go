package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
	"github.com/flotilla-io/flotilla/hub/search/store"
)

// Run runs the conformance suite; open returns an empty store for one
// test, closed by the test's cleanup.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		run  func(t *testing.T, s store.Store)
	}{
		{"ApplyRoundTrip", testRoundTrip},
		{"IdempotentVersions", testIdempotent},
		{"Deletes", testDeletes},
		{"Versions", testVersions},
		{"DeleteClusterAndClusters", testDeleteCluster},
		{"QueryFields", testQueryFields},
		{"Pagination", testPagination},
		{"PaginationWithConcurrentWrites", testPaginationConcurrent},
		{"BadContinue", testBadContinue},
		{"Limits", testLimits},
		{"BadInput", testBadInput},
		{"ConcurrentUse", testConcurrent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, open(t)) })
	}
}

func apply(t *testing.T, s store.Store, cluster string, upserts []searchv1alpha1.Object, deletes ...searchv1alpha1.ObjectRef) {
	t.Helper()
	if err := s.Apply(context.Background(), cluster, upserts, deletes); err != nil {
		t.Fatalf("Apply(%s): %v", cluster, err)
	}
}

// all returns every item q matches, following continue tokens.
func all(t *testing.T, s store.Store, q store.Query) []searchv1alpha1.SearchItem {
	t.Helper()
	var items []searchv1alpha1.SearchItem
	for {
		page, err := s.Query(context.Background(), q)
		if err != nil {
			t.Fatalf("Query(%+v): %v", q, err)
		}
		items = append(items, page.Items...)
		if page.Continue == "" {
			return items
		}
		q.Continue = page.Continue
	}
}

func keys(items []searchv1alpha1.SearchItem) []string {
	out := []string{}
	for _, item := range items {
		out = append(out, key(item))
	}
	return out
}

func testRoundTrip(t *testing.T, s store.Store) {
	pod := obj("Pod", "prod", "web-1", labels("app", "web"), images("nginx:1.25", "envoy:1"), status("Running"),
		owner("ReplicaSet", "web-abc"), fields("spec.nodeName", "node-1"), func(o *searchv1alpha1.Object) {
			o.Conditions = map[string]string{"Ready": "True"}
		})
	node := obj("Node", "", "node-1")
	apply(t, s, "b", []searchv1alpha1.Object{pod})
	apply(t, s, "a", []searchv1alpha1.Object{pod, node})
	got := all(t, s, store.Query{})
	want := []searchv1alpha1.SearchItem{{Cluster: "a", Object: node}, {Cluster: "a", Object: pod}, {Cluster: "b", Object: pod}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("items, ordered by cluster, namespace, name (-want +got):\n%s", diff)
	}
}

func testIdempotent(t *testing.T, s store.Store) {
	v5 := obj("Pod", "prod", "web-1", rv("5"), labels("app", "web"))
	apply(t, s, "a", []searchv1alpha1.Object{v5})
	// Same UID and version with other content: not written again.
	same := obj("Pod", "prod", "web-1", rv("5"), labels("app", "other"))
	apply(t, s, "a", []searchv1alpha1.Object{same})
	if got := keys(all(t, s, store.Query{Labels: mustSelector(t, "app=web")})); !cmp.Equal(got, []string{"a/Pod/prod/web-1"}) {
		t.Errorf("after the same version again, app=web finds %v, want the first write", got)
	}
	v6 := obj("Pod", "prod", "web-1", rv("6"), labels("app", "api"))
	apply(t, s, "a", []searchv1alpha1.Object{v6})
	// An older batch replayed after a newer one changes nothing.
	apply(t, s, "a", []searchv1alpha1.Object{v5})
	items := all(t, s, store.Query{})
	if len(items) != 1 || items[0].ResourceVersion != "6" || items[0].Labels["app"] != "api" {
		t.Fatalf("after v5, v6 and v5 replayed: %+v, want the one object at version 6", items)
	}
	if got := all(t, s, store.Query{Labels: mustSelector(t, "app=web")}); len(got) != 0 {
		t.Errorf("the old label app=web still finds %v", keys(got))
	}
	if got := keys(all(t, s, store.Query{Labels: mustSelector(t, "app=api")})); !cmp.Equal(got, []string{"a/Pod/prod/web-1"}) {
		t.Errorf("app=api finds %v", got)
	}
	// Versions that are not numbers are replaced by any other version.
	opaque := obj("Pod", "prod", "web-1", rv("x"), labels("app", "opaque"))
	apply(t, s, "a", []searchv1alpha1.Object{opaque})
	if items := all(t, s, store.Query{}); len(items) != 1 || items[0].ResourceVersion != "x" {
		t.Errorf("after an opaque version: %+v", items)
	}
}

func testDeletes(t *testing.T, s store.Store) {
	web := obj("Pod", "prod", "web-1", labels("app", "web"), images("nginx:1.25"), fields("spec.nodeName", "n1"))
	db := obj("Pod", "prod", "db-0")
	apply(t, s, "a", []searchv1alpha1.Object{web, db})
	apply(t, s, "b", []searchv1alpha1.Object{web})
	// Deleting what the store does not hold is no error, in a batch with
	// an upsert and a real delete.
	late := obj("Pod", "prod", "late")
	apply(t, s, "a", []searchv1alpha1.Object{late}, ref(web), searchv1alpha1.ObjectRef{Resource: "pods", UID: "never-seen"})
	if got, want := keys(all(t, s, store.Query{})), []string{"a/Pod/prod/db-0", "a/Pod/prod/late", "b/Pod/prod/web-1"}; !cmp.Equal(got, want) {
		t.Errorf("after deleting a's web-1: %v, want %v", got, want)
	}
	for _, q := range []store.Query{
		{Labels: mustSelector(t, "app=web")}, {Images: []string{"nginx"}}, {NameContains: "web"},
		{Fields: map[string]string{"spec.nodeName": "n1"}},
	} {
		if got, want := keys(all(t, s, q)), []string{"b/Pod/prod/web-1"}; !cmp.Equal(got, want) {
			t.Errorf("after the delete, %+v finds %v, want %v", q, got, want)
		}
	}
	// Deleting again is no error.
	apply(t, s, "a", nil, ref(web))
}

func testVersions(t *testing.T, s store.Store) {
	ctx := context.Background()
	apply(t, s, "a", []searchv1alpha1.Object{
		obj("Pod", "prod", "web-1", rv("10")), obj("Pod", "dev", "web-1", rv("11")),
		obj("Deployment", "prod", "web", rv("12")),
	})
	apply(t, s, "b", []searchv1alpha1.Object{obj("Pod", "prod", "other", rv("13"))})
	got, err := s.Versions(ctx, "a", schema.GroupResource{Resource: "pods"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[types.UID]string{"uid-Pod-prod-web-1": "10", "uid-Pod-dev-web-1": "11"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Versions(a, pods) (-want +got):\n%s", diff)
	}
	got, err = s.Versions(ctx, "a", schema.GroupResource{Group: "apps", Resource: "deployments"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[types.UID]string{"uid-Deployment-prod-web": "12"}, got); diff != "" {
		t.Errorf("Versions(a, deployments.apps) (-want +got):\n%s", diff)
	}
	got, err = s.Versions(ctx, "none", schema.GroupResource{Resource: "pods"})
	if err != nil || len(got) != 0 || got == nil {
		t.Errorf("Versions of an unknown cluster: %v, %v; want an empty map", got, err)
	}
}

func testDeleteCluster(t *testing.T, s store.Store) {
	ctx := context.Background()
	apply(t, s, "a", []searchv1alpha1.Object{obj("Pod", "prod", "web-1", labels("app", "web"), images("nginx")), obj("Pod", "prod", "web-2")})
	apply(t, s, "b", []searchv1alpha1.Object{obj("Pod", "prod", "web-1", labels("app", "web"), images("nginx"))})
	counts, err := s.Clusters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int64{"a": 2, "b": 1}, counts); diff != "" {
		t.Errorf("Clusters (-want +got):\n%s", diff)
	}
	if err := s.DeleteCluster(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteCluster(ctx, "never-seen"); err != nil {
		t.Errorf("DeleteCluster of an unknown cluster: %v", err)
	}
	counts, err = s.Clusters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int64{"b": 1}, counts); diff != "" {
		t.Errorf("Clusters after DeleteCluster(a) (-want +got):\n%s", diff)
	}
	for _, q := range []store.Query{{}, {Labels: mustSelector(t, "app=web")}, {Images: []string{"nginx"}}, {NameContains: "web"}} {
		if got, want := keys(all(t, s, q)), []string{"b/Pod/prod/web-1"}; !cmp.Equal(got, want) {
			t.Errorf("after DeleteCluster(a), %+v finds %v, want %v", q, got, want)
		}
	}
	if v, err := s.Versions(ctx, "a", schema.GroupResource{Resource: "pods"}); err != nil || len(v) != 0 {
		t.Errorf("Versions(a) after DeleteCluster: %v, %v", v, err)
	}
	// The cluster can come back.
	apply(t, s, "a", []searchv1alpha1.Object{obj("Pod", "prod", "web-1")})
	if got := keys(all(t, s, store.Query{Clusters: []string{"a"}})); !cmp.Equal(got, []string{"a/Pod/prod/web-1"}) {
		t.Errorf("cluster a indexed again: %v", got)
	}
}

func mustSelector(t *testing.T, s string) k8slabels.Requirements {
	t.Helper()
	sel, err := k8slabels.Parse(s)
	if err != nil {
		t.Fatalf("selector %q: %v", s, err)
	}
	reqs, _ := sel.Requirements()
	return reqs
}

// fixture is the fleet the query tests search.
func fixture(t *testing.T, s store.Store) {
	apply(t, s, "a", []searchv1alpha1.Object{
		obj("Pod", "prod", "web-1", labels("app", "web", "tier", "front"), images("nginx:1.25"), status("Running"),
			owner("ReplicaSet", "web-abc"), fields("spec.nodeName", "node-1", "status.podIP", "10.0.0.1")),
		obj("Pod", "prod", "db-0", labels("app", "db"), images("postgres:16", "busybox:1.36"), status("CrashLoopBackOff"),
			owner("StatefulSet", "db"), fields("spec.nodeName", "node-2")),
		obj("Deployment", "prod", "web", labels("app", "web"), images("nginx:1.25"), status("Available")),
		obj("Node", "", "node-1", labels("role", "worker"), status("Ready")),
	})
	apply(t, s, "b", []searchv1alpha1.Object{
		obj("Pod", "dev", "web-1", labels("app", "web", "env", "dev"), images("registry.io/nginx:1.26", "envoy:1"), status("Running"),
			owner("ReplicaSet", "web-def"), fields("spec.nodeName", "node-1")),
		obj("ConfigMap", "dev", "web-config"),
		obj("Pod", "dev", "My_Odd%Pod", status("Pending")),
	})
}

func testQueryFields(t *testing.T, s store.Store) {
	fixture(t, s)
	for _, tt := range []struct {
		name string
		q    store.Query
		want []string
	}{
		{"everything", store.Query{}, []string{"a/Node//node-1", "a/Pod/prod/db-0", "a/Deployment/prod/web", "a/Pod/prod/web-1",
			"b/Pod/dev/My_Odd%Pod", "b/Pod/dev/web-1", "b/ConfigMap/dev/web-config"}},
		{"clusters nil is every cluster", store.Query{Clusters: nil, Kinds: []string{"ConfigMap"}}, []string{"b/ConfigMap/dev/web-config"}},
		{"clusters empty is none", store.Query{Clusters: []string{}}, nil},
		{"clusters", store.Query{Clusters: []string{"b", "c"}, Kinds: []string{"pod"}}, []string{"b/Pod/dev/My_Odd%Pod", "b/Pod/dev/web-1"}},
		{"kinds without regard to case", store.Query{Kinds: []string{"DEPLOYMENT", "node"}}, []string{"a/Node//node-1", "a/Deployment/prod/web"}},
		{"groups", store.Query{Groups: []string{"apps"}}, []string{"a/Deployment/prod/web"}},
		{"core group", store.Query{Groups: []string{""}, Resources: []string{"nodes", "configmaps"}}, []string{"a/Node//node-1", "b/ConfigMap/dev/web-config"}},
		{"resources", store.Query{Resources: []string{"deployments"}}, []string{"a/Deployment/prod/web"}},
		{"namespaces", store.Query{Namespaces: []string{"prod"}, Kinds: []string{"Pod"}}, []string{"a/Pod/prod/db-0", "a/Pod/prod/web-1"}},
		{"cluster-scoped namespace", store.Query{Namespaces: []string{""}}, []string{"a/Node//node-1"}},
		{"names exactly", store.Query{Names: []string{"web", "web-config"}}, []string{"a/Deployment/prod/web", "b/ConfigMap/dev/web-config"}},
		{"names are case-sensitive", store.Query{Names: []string{"WEB"}}, nil},
		{"name contains, without regard to case", store.Query{NameContains: "EB-"}, []string{"a/Pod/prod/web-1", "b/Pod/dev/web-1", "b/ConfigMap/dev/web-config"}},
		{"name contains, short", store.Query{NameContains: "b"}, []string{"a/Pod/prod/db-0", "a/Deployment/prod/web", "a/Pod/prod/web-1", "b/Pod/dev/web-1", "b/ConfigMap/dev/web-config"}},
		{"name contains special characters literally", store.Query{NameContains: "_odd%"}, []string{"b/Pod/dev/My_Odd%Pod"}},
		{"name contains a wildcard that matches nothing", store.Query{NameContains: "w*b"}, nil},
		{"images substring", store.Query{Images: []string{"nginx"}}, []string{"a/Deployment/prod/web", "a/Pod/prod/web-1", "b/Pod/dev/web-1"}},
		{"images any of", store.Query{Images: []string{"nginx:1.26", "busybox"}}, []string{"a/Pod/prod/db-0", "b/Pod/dev/web-1"}},
		{"images second container", store.Query{Images: []string{"envoy:1"}}, []string{"b/Pod/dev/web-1"}},
		{"images are case-sensitive", store.Query{Images: []string{"NGINX"}}, nil},
		{"images no match", store.Query{Images: []string{"redis"}}, nil},
		{"statuses", store.Query{Statuses: []string{"CrashLoopBackOff", "Pending"}}, []string{"a/Pod/prod/db-0", "b/Pod/dev/My_Odd%Pod"}},
		{"owner kind without regard to case", store.Query{OwnerKind: "replicaset"}, []string{"a/Pod/prod/web-1", "b/Pod/dev/web-1"}},
		{"owner name", store.Query{OwnerName: "db"}, []string{"a/Pod/prod/db-0"}},
		{"owner kind and name", store.Query{OwnerKind: "ReplicaSet", OwnerName: "web-def"}, []string{"b/Pod/dev/web-1"}},
		{"owner kind and another's name", store.Query{OwnerKind: "StatefulSet", OwnerName: "web-def"}, nil},
		{"label =", store.Query{Labels: mustSelector(t, "app=web")}, []string{"a/Deployment/prod/web", "a/Pod/prod/web-1", "b/Pod/dev/web-1"}},
		{"label ==", store.Query{Labels: mustSelector(t, "app==db")}, []string{"a/Pod/prod/db-0"}},
		{"label !=, objects without the key too", store.Query{Labels: mustSelector(t, "app!=web")}, []string{"a/Node//node-1", "a/Pod/prod/db-0",
			"b/Pod/dev/My_Odd%Pod", "b/ConfigMap/dev/web-config"}},
		{"label in", store.Query{Labels: mustSelector(t, "app in (db, nothing)")}, []string{"a/Pod/prod/db-0"}},
		{"label notin", store.Query{Labels: mustSelector(t, "app notin (web, db), tier notin (x)")}, []string{"a/Node//node-1", "b/Pod/dev/My_Odd%Pod", "b/ConfigMap/dev/web-config"}},
		{"label exists", store.Query{Labels: mustSelector(t, "tier")}, []string{"a/Pod/prod/web-1"}},
		{"label does not exist", store.Query{Labels: mustSelector(t, "!app")}, []string{"a/Node//node-1", "b/Pod/dev/My_Odd%Pod", "b/ConfigMap/dev/web-config"}},
		{"labels AND", store.Query{Labels: mustSelector(t, "app=web,env=dev")}, []string{"b/Pod/dev/web-1"}},
		{"labels AND with !=", store.Query{Labels: mustSelector(t, "app=web,env!=dev")}, []string{"a/Deployment/prod/web", "a/Pod/prod/web-1"}},
		{"field", store.Query{Fields: map[string]string{"spec.nodeName": "node-1"}}, []string{"a/Pod/prod/web-1", "b/Pod/dev/web-1"}},
		{"fields AND", store.Query{Fields: map[string]string{"spec.nodeName": "node-1", "status.podIP": "10.0.0.1"}}, []string{"a/Pod/prod/web-1"}},
		{"field metadata.name", store.Query{Fields: map[string]string{"metadata.name": "web-1"}}, []string{"a/Pod/prod/web-1", "b/Pod/dev/web-1"}},
		{"field metadata.namespace", store.Query{Fields: map[string]string{"metadata.namespace": "dev", "metadata.name": "web-config"}}, []string{"b/ConfigMap/dev/web-config"}},
		{"field no match", store.Query{Fields: map[string]string{"spec.nodeName": "node-3"}}, nil},
		{"every field narrows", store.Query{Clusters: []string{"a", "b"}, Kinds: []string{"Pod"}, Namespaces: []string{"prod", "dev"},
			NameContains: "web", Images: []string{"nginx"}, Statuses: []string{"Running"}, OwnerKind: "ReplicaSet",
			Labels: mustSelector(t, "app=web,tier=front"), Fields: map[string]string{"spec.nodeName": "node-1"}}, []string{"a/Pod/prod/web-1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := keys(all(t, s, tt.q))
			want := tt.want
			if want == nil {
				want = []string{}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// objects returns n pods in namespace ns of cluster, named prefix-000…
func pods(ns, prefix string, n int) []searchv1alpha1.Object {
	var out []searchv1alpha1.Object
	for i := range n {
		out = append(out, obj("Pod", ns, fmt.Sprintf("%s-%03d", prefix, i), labels("app", "paged")))
	}
	return out
}

func testPagination(t *testing.T, s store.Store) {
	apply(t, s, "a", pods("ns", "p", 12))
	apply(t, s, "b", pods("ns", "p", 13))
	ctx := context.Background()
	q := store.Query{Limit: 10, Labels: mustSelector(t, "app=paged")}
	var sizes []int
	var got []string
	for {
		page, err := s.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(page.Items))
		got = append(got, keys(page.Items)...)
		if page.Continue == "" {
			break
		}
		q.Continue = page.Continue
	}
	if !cmp.Equal(sizes, []int{10, 10, 5}) {
		t.Errorf("page sizes %v, want [10 10 5]", sizes)
	}
	want := keys(all(t, s, store.Query{Limit: store.MaxLimit}))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pages joined differ from one page (-want +got):\n%s", diff)
	}
	// A page that ends exactly at the last object has no continue.
	page, err := s.Query(ctx, store.Query{Limit: 25})
	if err != nil || len(page.Items) != 25 || page.Continue != "" {
		t.Errorf("a page of exactly every object: %d items, continue %q, %v", len(page.Items), page.Continue, err)
	}
}

func testPaginationConcurrent(t *testing.T, s store.Store) {
	ctx := context.Background()
	apply(t, s, "b", pods("ns", "m", 40))
	present := map[string]bool{}
	for _, item := range all(t, s, store.Query{}) {
		present[key(item)] = true
	}
	q := store.Query{Limit: 7}
	seen := map[string]int{}
	for round := 0; ; round++ {
		page, err := s.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range page.Items {
			seen[key(item)]++
		}
		if page.Continue == "" {
			break
		}
		q.Continue = page.Continue
		// Between pages, objects arrive before the cursor, after it and
		// in other clusters, and others change.
		apply(t, s, "a", pods("ns", fmt.Sprintf("early%d", round), 2))
		apply(t, s, "b", append(pods("ns", fmt.Sprintf("m-%03d-new", round*5), 2),
			obj("Pod", "ns", fmt.Sprintf("m-%03d", 39-round), rv(fmt.Sprint(100+round)))))
		apply(t, s, "c", pods("ns", fmt.Sprintf("late%d", round), 2))
	}
	for k, n := range seen {
		if n > 1 {
			t.Errorf("%s seen %d times", k, n)
		}
	}
	for k := range present {
		if seen[k] == 0 {
			t.Errorf("%s, present throughout, was skipped", k)
		}
	}
}

func testBadContinue(t *testing.T, s store.Store) {
	apply(t, s, "a", pods("ns", "p", 3))
	page, err := s.Query(context.Background(), store.Query{Limit: 1})
	if err != nil || page.Continue == "" {
		t.Fatalf("first page: %v, continue %q", err, page.Continue)
	}
	for _, token := range []string{"garbage", page.Continue[:len(page.Continue)-3], "s1.!!!", "s1.e30", page.Continue + "x"} {
		_, err := s.Query(context.Background(), store.Query{Continue: token})
		if !errors.Is(err, store.ErrBadContinue) {
			t.Errorf("continue %q: %v, want ErrBadContinue", token, err)
		}
	}
}

func testLimits(t *testing.T, s store.Store) {
	ctx := context.Background()
	var objects []searchv1alpha1.Object
	for i := range store.MaxLimit + 1 {
		objects = append(objects, obj("Pod", "ns", fmt.Sprintf("p-%05d", i)))
	}
	for start := 0; start < len(objects); start += 500 {
		apply(t, s, "a", objects[start:min(start+500, len(objects))])
	}
	for _, tt := range []struct{ limit, want int }{{0, store.DefaultLimit}, {1, 1}, {store.MaxLimit + 1000, store.MaxLimit}} {
		page, err := s.Query(ctx, store.Query{Limit: tt.limit})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Items) != tt.want || page.Continue == "" {
			t.Errorf("limit %d: %d items, continue %q; want %d and a continue", tt.limit, len(page.Items), page.Continue, tt.want)
		}
	}
	if _, err := s.Query(ctx, store.Query{Limit: -1}); err == nil {
		t.Errorf("limit -1: no error")
	}
}

func testBadInput(t *testing.T, s store.Store) {
	ctx := context.Background()
	if err := s.Apply(ctx, "a", []searchv1alpha1.Object{obj("Pod", "ns", "p", uid(""))}, nil); err == nil {
		t.Errorf("an object without a UID: no error")
	}
	if err := s.Apply(ctx, "", []searchv1alpha1.Object{obj("Pod", "ns", "p")}, nil); err == nil {
		t.Errorf("an empty cluster name: no error")
	}
	if items := all(t, s, store.Query{}); len(items) != 0 {
		t.Errorf("a refused batch wrote %v", keys(items))
	}
	if _, err := s.Query(ctx, store.Query{Labels: mustSelector(t, "n>3")}); err == nil {
		t.Errorf("label operator gt: no error")
	}
	if err := s.Ping(ctx); err != nil {
		t.Errorf("Ping: %v", err)
	}
}

func testConcurrent(t *testing.T, s store.Store) {
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for c := range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for b := range 5 {
				if err := s.Apply(ctx, fmt.Sprintf("c%d", c), pods("ns", fmt.Sprintf("b%d", b), 20), nil); err != nil {
					errs <- err
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range 10 {
				if _, err := s.Query(ctx, store.Query{Labels: mustSelector(t, "app=paged"), Limit: 50}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	counts, err := s.Clusters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"c0": 100, "c1": 100, "c2": 100, "c3": 100}
	if diff := cmp.Diff(want, counts); diff != "" {
		t.Errorf("Clusters after concurrent batches (-want +got):\n%s", diff)
	}
}
