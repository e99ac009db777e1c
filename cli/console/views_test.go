package console

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	"github.com/flotilla-io/flotilla/api/install"
)

const testHost = "127.0.0.1:7080"

var testScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(install.AddToScheme(s))
	return s
}()

// unorderedCache stands in for the informers' cache, which lists in no
// order (its store is a map): it lists in reverse, so that a view that
// shows the cache's order shows it reversed.
type unorderedCache struct {
	client.Reader
	cache.Informers
}

func (c unorderedCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := c.Reader.List(ctx, list, opts...); err != nil {
		return err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return err
	}
	slices.Reverse(items)
	return meta.SetList(list, items)
}

// fakeActions accepts and denies clusters in a map: the state the hub would hold.
type fakeActions struct{ accepted map[string]bool }

func (a *fakeActions) Accept(_ context.Context, c string) error { a.accepted[c] = true; return nil }
func (a *fakeActions) Deny(_ context.Context, c string) error   { a.accepted[c] = false; return nil }

// serverWith is a console whose caches hold objs, seen everywhere, with
// a session: its cookie and CSRF token.
func serverWith(t *testing.T, actions Actions, objs ...client.Object) (s *server, session, csrf string) {
	t.Helper()
	c := fake.NewClientBuilder().WithScheme(testScheme).WithObjects(objs...).Build()
	st := &store{kube: kubefake.NewClientset(), client: c, cache: unorderedCache{Reader: c}, access: map[string]access{}}
	for _, k := range allKinds {
		st.access[k.resource] = access{all: true}
	}
	s, err := newServer(Options{Hub: "test", Actions: actions}, st, newNotifier(), 7080)
	if err != nil {
		t.Fatal(err)
	}
	w := do(s, "GET", "/login?secret="+s.auth.secret, testHost, "", nil, "")
	ck := w.Result().Cookies()[0]
	return s, ck.Name + "=" + ck.Value, s.auth.sessions[ck.Value]
}

func managedCluster(name string, accepted, available bool, lbls map[string]string) *clusterv1.ManagedCluster {
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbls}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: accepted}}
	if accepted {
		st := metav1.ConditionUnknown
		if available {
			st = metav1.ConditionTrue
		}
		mc.Status.Conditions = []metav1.Condition{{Type: clusterv1.ManagedClusterConditionAvailable, Status: st, Reason: "Test"}}
	}
	return mc
}

func labelSet(name string, sel map[string]string) *clusterv1beta2.ManagedClusterSet {
	return &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1beta2.ManagedClusterSetSpec{
		ClusterSelector: clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.LabelSelector, LabelSelector: &metav1.LabelSelector{MatchLabels: sel}}}}
}

// A cluster's sets show in name order, on the fleet and on its page,
// whatever order the cache lists them in.
func TestClusterSetsInNameOrder(t *testing.T) {
	s, session, _ := serverWith(t, nil,
		managedCluster("c1", true, true, map[string]string{"env": "prod"}),
		labelSet("alpha", nil), labelSet("beta", map[string]string{"env": "prod"}), labelSet("gamma", nil), labelSet("other", map[string]string{"env": "dev"}))
	for _, target := range []string{"/fleet", "/clusters/c1"} {
		w := do(s, "GET", target, testHost, session, nil, "")
		if w.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", target, w.Code, w.Body.String())
		}
		if !strings.Contains(w.Body.String(), "alpha, beta, gamma<") {
			t.Errorf("GET %s: the cluster sets are not listed as alpha, beta, gamma: %s", target, regexp.MustCompile(`(alpha|beta|gamma)[^<]*<`).FindString(w.Body.String()))
		}
	}
}

// A cluster that does not exist gets the console's own page, styled, in
// the fleet's section, with a 404; so does a page the console lacks.
func TestNotFoundPageIsTheConsoles(t *testing.T) {
	s, session, _ := serverWith(t, nil, managedCluster("c1", true, true, nil))
	for _, tt := range []struct{ target, say, back string }{
		{"/clusters/nope", "cluster nope: no such ManagedCluster", `href="/fleet"`},
		{"/rollouts/ns/nope", "ManifestWorkReplicaSet ns/nope: not found", `href="/rollouts"`},
		{"/nonsense", "The console has no page /nonsense.", `href="/fleet"`},
	} {
		w := do(s, "GET", tt.target, testHost, session, nil, "")
		body := w.Body.String()
		if w.Code != http.StatusNotFound || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
			t.Errorf("GET %s: %d %s, want 404 text/html", tt.target, w.Code, w.Header().Get("Content-Type"))
		}
		for _, want := range []string{`<link rel="stylesheet" href="/static/console.css">`, "<h1>Not found</h1>", tt.say, tt.back, `aria-current="page"`} {
			if !strings.Contains(body, want) {
				t.Errorf("GET %s: the page lacks %q:\n%s", tt.target, want, body)
			}
		}
	}
}

// Deny is not on a healthy cluster's row, and it is done only once
// confirmed: an unconfirmed post denies nothing and asks.
func TestDenyAsksFirst(t *testing.T) {
	hub := &fakeActions{accepted: map[string]bool{"healthy": true, "lost": true}}
	s, session, csrf := serverWith(t, hub, managedCluster("healthy", true, true, nil), managedCluster("lost", true, false, nil))
	fleet := do(s, "GET", "/fleet", testHost, session, nil, "").Body.String()
	row := func(name string) string {
		return regexp.MustCompile(`(?s)<tr data-cluster="` + name + `">.*?</tr>`).FindString(fleet)
	}
	if strings.Contains(row("healthy"), "/actions/deny") {
		t.Errorf("the fleet offers Deny on an Available cluster's row:\n%s", row("healthy"))
	}
	if !strings.Contains(row("lost"), `data-confirm="Deny cluster lost?`) {
		t.Errorf("the row of an Unknown cluster lacks a Deny that asks first:\n%s", row("lost"))
	}
	page := do(s, "GET", "/clusters/healthy", testHost, session, nil, "").Body.String()
	if !strings.Contains(page, `action="/actions/deny" data-confirm="Deny cluster healthy?`) {
		t.Errorf("the cluster's page lacks a Deny that asks first:\n%s", page)
	}

	origin := "http://" + testHost
	form := url.Values{"csrf": {csrf}, "cluster": {"healthy"}}
	w := do(s, "POST", "/actions/deny", testHost, session, form, origin)
	if w.Code != http.StatusOK || !hub.accepted["healthy"] {
		t.Fatalf("an unconfirmed deny: %d, accepted %v; want a page that asks, and the cluster still accepted", w.Code, hub.accepted["healthy"])
	}
	for _, want := range []string{"Deny cluster healthy? The hub stops accepting it", `name="confirmed" value="yes"`, `name="csrf" value="` + csrf + `"`, ">Deny cluster healthy</button>", `href="/clusters/healthy">Cancel`} {
		if !strings.Contains(w.Body.String(), want) {
			t.Errorf("the confirmation page lacks %q:\n%s", want, w.Body.String())
		}
	}
	r := do(s, "POST", "/actions/deny", testHost, session, form, origin, "X-Console", "1")
	if r.Code != http.StatusConflict || !hub.accepted["healthy"] {
		t.Fatalf("an unconfirmed deny from the script: %d, accepted %v; want 409 and the cluster still accepted", r.Code, hub.accepted["healthy"])
	}
	form.Set("confirmed", "yes")
	if w := do(s, "POST", "/actions/deny", testHost, session, url.Values{"csrf": {"forged"}, "cluster": {"healthy"}, "confirmed": {"yes"}}, origin); w.Code != http.StatusForbidden || !hub.accepted["healthy"] {
		t.Fatalf("a confirmed deny with a wrong CSRF token: %d, accepted %v; want 403 and the cluster still accepted", w.Code, hub.accepted["healthy"])
	}
	w = do(s, "POST", "/actions/deny", testHost, session, form, origin, "X-Console", "1")
	if w.Code != http.StatusOK || hub.accepted["healthy"] || w.Body.String() != "Denied cluster healthy." {
		t.Fatalf("a confirmed deny: %d %q, accepted %v; want the cluster denied", w.Code, w.Body.String(), hub.accepted["healthy"])
	}
}
