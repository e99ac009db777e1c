package workreplicaset

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestWrittenRevisionsOverlay(t *testing.T) {
	cr := func(name, rv string, revision int64) *appsv1.ControllerRevision {
		return &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("u-" + name), ResourceVersion: rv}, Revision: revision}
	}
	now := time.Now()
	var w writtenRevisions
	w.remember("ns.app", cr("new", "10", 3), now)
	w.remember("ns.app", cr("renumbered", "12", 4), now)
	w.forgetDeleted("ns.app", "pruned", now)

	cached := map[string]*appsv1.ControllerRevision{"renumbered": cr("renumbered", "5", 1), "pruned": cr("pruned", "2", 0)}
	w.overlay("ns.app", cached, now)
	if cached["new"] == nil || cached["new"].Revision != 3 {
		t.Errorf("a created revision the cache does not show is missing: %v", cached["new"])
	}
	if cached["renumbered"].Revision != 4 {
		t.Errorf("a stale cached revision shows revision %d, not the written 4", cached["renumbered"].Revision)
	}
	if _, ok := cached["pruned"]; ok {
		t.Error("a deleted revision the cache still shows is listed")
	}

	// The cache catches up: everything is forgotten.
	caught := map[string]*appsv1.ControllerRevision{"new": cr("new", "10", 3), "renumbered": cr("renumbered", "13", 5)}
	w.overlay("ns.app", caught, now)
	if caught["renumbered"].Revision != 5 {
		t.Error("a cached copy newer than the write is overwritten")
	}
	if len(w.byOwner) != 0 {
		t.Errorf("writes the cache shows are remembered still: %v", w.byOwner)
	}

	// A write the cache never shows is forgotten after writtenTTL.
	w.remember("ns.app", cr("lost", "20", 6), now)
	late := map[string]*appsv1.ControllerRevision{}
	w.overlay("ns.app", late, now.Add(writtenTTL+time.Second))
	if len(late) != 0 || len(w.byOwner) != 0 {
		t.Error("a write older than writtenTTL is trusted over the cache")
	}
}
