package registration

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
)

// managedClusterType is the kind a served ManagedCluster says it is.
var managedClusterType = metav1.TypeMeta{APIVersion: clusterv1.GroupVersion.String(), Kind: "ManagedCluster"}

// hubListing serves the list and watch of ManagedClusters scoped to the
// name c1: the list holds items; a watch that asks for the initial
// events (client-go's informers list that way) sends them and the
// bookmark that ends them, and then nothing until the request ends.
func hubListing(t *testing.T, items ...clusterv1.ManagedCluster) *rest.Config {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if got := req.URL.Query().Get("fieldSelector"); got != "metadata.name=c1" {
			t.Errorf("%s %s: fieldSelector %q, want the watch scoped to its cluster", req.Method, req.URL, got)
		}
		w.Header().Set("Content-Type", "application/json")
		if req.URL.Query().Get("watch") == "true" {
			w.WriteHeader(http.StatusOK)
			if req.URL.Query().Get("sendInitialEvents") == "true" {
				enc := json.NewEncoder(w)
				for i := range items {
					_ = enc.Encode(metav1.WatchEvent{Type: string(watch.Added), Object: runtime.RawExtension{Object: &items[i]}})
				}
				end := &clusterv1.ManagedCluster{
					TypeMeta:   managedClusterType,
					ObjectMeta: metav1.ObjectMeta{ResourceVersion: "7", Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}},
				}
				_ = enc.Encode(metav1.WatchEvent{Type: string(watch.Bookmark), Object: runtime.RawExtension{Object: end}})
			}
			w.(http.Flusher).Flush()
			<-req.Context().Done()
			return
		}
		_ = json.NewEncoder(w).Encode(&clusterv1.ManagedClusterList{
			TypeMeta: metav1.TypeMeta{APIVersion: clusterv1.GroupVersion.String(), Kind: "ManagedClusterList"},
			ListMeta: metav1.ListMeta{ResourceVersion: "7"},
			Items:    items,
		})
	}))
	t.Cleanup(srv.Close)
	return &rest.Config{Host: srv.URL}
}

// seen is what clusterWatch.get returned when the watch woke its caller.
type seen struct {
	cluster  *clusterv1.ManagedCluster
	watching bool
}

// watchOnce runs a clusterWatch of c1 against cfg and returns what get
// returned at the first wake.
func watchOnce(t *testing.T, cfg *rest.Config) seen {
	t.Helper()
	c, err := newHubClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	woken := make(chan seen, 10)
	var w *clusterWatch
	w, err = newClusterWatch(c, "c1", func() {
		mc, watching := w.get()
		woken <- seen{mc, watching}
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.run(ctx) }()
	defer func() { cancel(); <-done }()
	select {
	case s := <-woken:
		return s
	case <-time.After(30 * time.Second):
		t.Fatal("the watch never woke its caller")
		return seen{}
	}
}

// TestClusterWatchWakesWithTheCluster checks that the status controller,
// woken by the watch, finds what woke it: the informer says it synced
// only after its handler ran, and a get that asked that first found
// nothing, and the controller slept until the next wake, which for an
// idle cluster never came (one agent of 100 in the registration
// benchmark never reported Joined). Each run is a race the old get lost
// now and then, so it is run many times.
func TestClusterWatchWakesWithTheCluster(t *testing.T) {
	cfg := hubListing(t, clusterv1.ManagedCluster{
		TypeMeta:   managedClusterType,
		ObjectMeta: metav1.ObjectMeta{Name: "c1", ResourceVersion: "7"},
		Spec:       clusterv1.ManagedClusterSpec{LeaseDurationSeconds: 60},
	})
	for i := range 200 {
		s := watchOnce(t, cfg)
		if s.cluster == nil || !s.watching || s.cluster.Spec.LeaseDurationSeconds != 60 {
			t.Fatalf("run %d: the wake found cluster %v, watching %t; want c1 as listed", i, s.cluster, s.watching)
		}
	}
}

// TestClusterWatchWakesWhenListedEmpty checks that a list without the
// cluster, which calls no handler, still wakes the controller once it is
// done, so that the controller asks the hub rather than wait for ever.
func TestClusterWatchWakesWhenListedEmpty(t *testing.T) {
	s := watchOnce(t, hubListing(t))
	if s.cluster != nil || !s.watching {
		t.Fatalf("the wake found cluster %v, watching %t; want none, watching", s.cluster, s.watching)
	}
}
