package query

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
	"github.com/flotilla-io/flotilla/hub/search/store"
	"github.com/flotilla-io/flotilla/internal/search"
)

func item(cluster, kind, ns, name, status string, lbls map[string]string) searchv1alpha1.SearchItem {
	res := map[string]string{"Pod": "pods", "Deployment": "deployments", "Node": "nodes"}[kind]
	group := map[string]string{"Deployment": "apps"}[kind]
	return searchv1alpha1.SearchItem{Cluster: cluster, Object: searchv1alpha1.Object{
		Group: group, Version: "v1", Resource: res, Kind: kind, Namespace: ns, Name: name,
		UID: types.UID("uid-" + cluster + "-" + name), Status: status, Labels: lbls, Images: []string{"nginx:1.27"},
	}}
}

// grants allows each user create on managedclusters/proxy of the listed
// clusters ("" every cluster); the real RBAC decision is the integration
// tests' part.
type grantsAuthz map[string][]string

func (g grantsAuthz) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.GetResource() == ClusterResource && a.GetSubresource() == ProxySubresource && a.GetVerb() == "create" &&
		slices.Contains(g[a.GetUser().GetName()], a.GetName()) {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

func serve(t *testing.T, s store.Store, authz authorizer.Authorizer, who, path string, header http.Header) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, path, nil)
	r.Header = header
	if r.Header == nil {
		r.Header = http.Header{}
	}
	if who != "" {
		r = r.WithContext(apirequest.WithUser(r.Context(), &user.DefaultInfo{Name: who}))
	}
	w := httptest.NewRecorder()
	New(s, authz).ServeHTTP(w, r)
	return w
}

func decode[T any](t *testing.T, w *httptest.ResponseRecorder) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
		t.Fatalf("decode %s: %v", w.Body, err)
	}
	return v
}

func names(items []searchv1alpha1.SearchItem) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.Cluster+"/"+it.Name)
	}
	return out
}

func TestSearchSeesOnlyGrantedClusters(t *testing.T) {
	s := &memStore{items: []searchv1alpha1.SearchItem{
		item("c1", "Pod", "a", "web-1", "CrashLoopBackOff", nil),
		item("c1", "Pod", "a", "web-2", "Running", nil),
		item("c2", "Pod", "a", "web-3", "CrashLoopBackOff", nil),
		item("c3", "Pod", "b", "web-4", "CrashLoopBackOff", nil),
	}}
	authz := grantsAuthz{"admin": {""}, "alice": {"c1", "c3"}}
	q := "?q=" + url.QueryEscape("kind=Pod status=CrashLoopBackOff")
	for _, tc := range []struct {
		who, query string
		want       []string
	}{
		{"admin", q, []string{"c1/web-1", "c2/web-3", "c3/web-4"}},
		{"alice", q, []string{"c1/web-1", "c3/web-4"}},
		{"alice", q + url.QueryEscape(" cluster=c2,c3"), []string{"c3/web-4"}},
		{"alice", q + url.QueryEscape(" cluster!=c1"), []string{"c3/web-4"}},
		{"admin", q + url.QueryEscape(" cluster!=c1"), []string{"c2/web-3", "c3/web-4"}},
		{"bob", q, nil},
	} {
		t.Run(tc.who+tc.query, func(t *testing.T) {
			w := serve(t, s, authz, tc.who, search.SearchPath+tc.query, nil)
			if w.Code != http.StatusOK {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
			res := decode[searchv1alpha1.SearchResult](t, w)
			if got := names(res.Items); !slices.Equal(got, tc.want) {
				t.Errorf("items %v, want %v", got, tc.want)
			}
			if res.Kind != "SearchResult" || res.Items == nil {
				t.Errorf("result %s", w.Body)
			}
		})
	}
	if last := s.queries[len(s.queries)-1]; last.Clusters != nil {
		// bob's query never reaches the store; the last one is admin's.
		if !slices.Equal(last.Clusters, []string{"c2", "c3"}) {
			t.Errorf("admin's exclusion asked the store for %v", last.Clusters)
		}
	}
}

func TestSearchErrors(t *testing.T) {
	authz := grantsAuthz{"admin": {""}}
	for _, tc := range []struct {
		name, path string
		s          *memStore
		code       int
		msg        string
	}{
		{"malformed", search.SearchPath + "?q=status!=Running", &memStore{}, http.StatusBadRequest,
			`query term "status!=Running": status does not take != (only kind, group, cluster do): name the values you want, status=a,b`},
		{"not indexed", search.SearchPath + "?q=kind=Widget", &memStore{}, http.StatusBadRequest,
			`query term "kind=Widget": kind Widget is not indexed by search (indexed: Pod, Deployment, StatefulSet, DaemonSet, Job, Service, Ingress, Node, Namespace, ConfigMap, Secret); to index it, add it to spec.resources of SearchConfig default`},
		{"limit", search.SearchPath + "?limit=ten", &memStore{}, http.StatusBadRequest, `limit "ten" is not a page size: give a number from 1 to 5000`},
		{"continue", search.SearchPath + "?continue=zz", &memStore{}, http.StatusBadRequest,
			`invalid continue token: it comes from another query or hub; start again without continue`},
		{"unavailable", search.SearchPath, &memStore{err: fmt.Errorf("query: %w: connection refused", store.ErrUnavailable)}, http.StatusServiceUnavailable,
			`search index unavailable: query: search index unavailable: connection refused`},
		{"not indexed resource", search.ResourcesPrefix + "api/v1/persistentvolumeclaims", &memStore{}, http.StatusNotFound,
			`persistentvolumeclaims of core v1 is not indexed by search: to index it, add it to spec.resources of SearchConfig default`},
		{"field operator", search.ResourcesPrefix + "api/v1/pods?fieldSelector=spec.nodeName!=n1", &memStore{}, http.StatusBadRequest,
			`fieldSelector "spec.nodeName!=n1": search matches fields by = only (spec.nodeName!=n1)`},
		{"watch", search.ResourcesPrefix + "api/v1/pods?watch=true", &memStore{}, http.StatusMethodNotAllowed, `search does not watch: list again, or watch the cluster itself through the hub (flotilla kubeconfig --cluster <cluster>)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := serve(t, tc.s, authz, "admin", tc.path, nil)
			st := decode[metav1.Status](t, w)
			if w.Code != tc.code || st.Message != tc.msg {
				t.Errorf("got %d %q\nwant %d %q", w.Code, st.Message, tc.code, tc.msg)
			}
		})
	}
}

func TestResourcesForKubectl(t *testing.T) {
	s := &memStore{items: []searchv1alpha1.SearchItem{
		item("c1", "Pod", "a", "web-1", "Running", map[string]string{"app": "web"}),
		item("c1", "Deployment", "a", "web", "Available", map[string]string{"app": "web"}),
		item("c2", "Pod", "a", "web-2", "Running", map[string]string{"app": "web"}),
		item("c2", "Pod", "b", "db-1", "Running", map[string]string{"app": "db"}),
	}}
	authz := grantsAuthz{"admin": {""}}

	groups := decode[metav1.APIGroupList](t, serve(t, s, authz, "admin", search.ResourcesPrefix+"apis", nil))
	if len(groups.Groups) != 3 || groups.Groups[0].Name != "apps" {
		t.Errorf("groups %+v", groups.Groups)
	}
	core := decode[metav1.APIResourceList](t, serve(t, s, authz, "admin", search.ResourcesPrefix+"api/v1", nil))
	if i := slices.IndexFunc(core.APIResources, func(r metav1.APIResource) bool { return r.Name == "nodes" }); i < 0 || core.APIResources[i].Namespaced {
		t.Errorf("core resources %+v", core.APIResources)
	}

	table := decode[metav1.Table](t, serve(t, s, authz, "admin", search.ResourcesPrefix+"clusters/c2/api/v1/pods?labelSelector=app%3Dweb",
		http.Header{"Accept": {"application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}}))
	if len(table.Rows) != 1 || table.Rows[0].Cells[0] != "c2" || table.Rows[0].Cells[1] != "web-2" || table.ColumnDefinitions[0].Name != "Cluster" {
		t.Errorf("table %+v", table)
	}
	var meta metav1.PartialObjectMetadata
	if err := json.Unmarshal(table.Rows[0].Object.Raw, &meta); err != nil || meta.Namespace != "a" || meta.Annotations[ClusterAnnotation] != "c2" {
		t.Errorf("row object %s: %v", table.Rows[0].Object.Raw, err)
	}

	list := decode[map[string]any](t, serve(t, s, authz, "admin", search.ResourcesPrefix+"api/v1/namespaces/a/pods?limit=1", nil))
	if list["kind"] != "PodList" || len(list["items"].([]any)) != 1 || list["metadata"].(map[string]any)["continue"] != "1" {
		t.Errorf("list %v", list)
	}
	w := serve(t, s, authz, "admin", search.ResourcesPrefix+"apis/apps/v1/namespaces/a/deployments/web", nil)
	if obj := decode[map[string]any](t, w); obj["kind"] != "Deployment" {
		t.Errorf("get %s", w.Body)
	}
	if w := serve(t, s, authz, "admin", search.ResourcesPrefix+"api/v1/namespaces/a/pods/nothing", nil); w.Code != http.StatusNotFound {
		t.Errorf("get of a missing pod: %d %s", w.Code, w.Body)
	}
}

// A client-go client shows the hub's message, not "the server rejected
// our request for an unknown reason".
func TestErrorsReachClientGo(t *testing.T) {
	h := New(&memStore{}, grantsAuthz{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(apirequest.WithUser(r.Context(), &user.DefaultInfo{Name: "alice"})))
	}))
	defer srv.Close()
	kube, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	err = kube.Discovery().RESTClient().Get().AbsPath(search.SearchPath).Param("q", "kind=").Do(context.Background()).Error()
	if want := `query term "kind=": kind= has no value: write kind=<value>`; !apierrors.IsBadRequest(err) || err.Error() != want {
		t.Errorf("error %v, want a BadRequest %q", err, want)
	}
}
