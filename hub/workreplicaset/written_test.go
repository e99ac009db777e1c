package workreplicaset

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

func TestWrittenWorksOverlay(t *testing.T) {
	now := time.Now()
	work := func(cluster string, uid types.UID, gen int64) *workv1.ManifestWork {
		return &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: "app", UID: uid, Generation: gen}}
	}
	tests := []struct {
		name        string
		written     *workv1.ManifestWork
		cached      *workv1.ManifestWork
		at          time.Time
		wantGen     int64 // generation seen after the overlay; 0: no work
		wantForgets bool
	}{
		{"a created work the cache lacks is seen", work("c1", "u1", 1), nil, now, 1, false},
		{"an update the cache has not shown wins", work("c1", "u1", 3), work("c1", "u1", 2), now, 3, false},
		{"the cache at the written generation is trusted", work("c1", "u1", 3), work("c1", "u1", 3), now, 3, true},
		{"the cache past the written generation is trusted", work("c1", "u1", 3), work("c1", "u1", 4), now, 4, true},
		{"a work replaced by another object is the cache's", work("c1", "u1", 3), work("c1", "u2", 1), now, 1, true},
		{"a write older than the TTL is forgotten", work("c1", "u1", 1), nil, now.Add(-2 * writtenTTL), 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w writtenWorks
			w.remember("ns.app", tt.written, tt.at)
			cached := map[string]*workv1.ManifestWork{}
			if tt.cached != nil {
				cached["c1"] = tt.cached
			}
			w.overlay("ns.app", cached, now)
			var gotGen int64
			if cached["c1"] != nil {
				gotGen = cached["c1"].Generation
			}
			if gotGen != tt.wantGen {
				t.Errorf("generation seen = %d, want %d", gotGen, tt.wantGen)
			}
			_, remembered := w.byOwner["ns.app"]["c1"]
			if remembered == tt.wantForgets {
				t.Errorf("still remembered = %v, want %v", remembered, !tt.wantForgets)
			}
		})
	}
}

func TestWrittenWorksForget(t *testing.T) {
	var w writtenWorks
	now := time.Now()
	w.remember("ns.app", &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", UID: "u1", Generation: 1}}, now)
	w.remember("ns.app", &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: "c2", UID: "u2", Generation: 1}}, now)
	w.forget("ns.app", "c1")
	cached := map[string]*workv1.ManifestWork{}
	w.overlay("ns.app", cached, now)
	if cached["c1"] != nil || cached["c2"] == nil {
		t.Fatalf("after forgetting c1: c1 seen %v, c2 seen %v; want only c2", cached["c1"] != nil, cached["c2"] != nil)
	}
	w.forget("ns.app")
	cached = map[string]*workv1.ManifestWork{}
	w.overlay("ns.app", cached, now)
	if len(cached) != 0 {
		t.Fatalf("after forgetting the replica set, works seen: %v", cached)
	}
}
