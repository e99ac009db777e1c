package search

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
)

func obj(uid, rv string) searchv1alpha1.Object {
	return searchv1alpha1.Object{Version: "v1", Resource: "pods", Kind: "Pod", Name: uid, UID: types.UID(uid), ResourceVersion: rv}
}

func TestPendingCoalescesPerUID(t *testing.T) {
	p := newPending()
	for i := range 1000 {
		p.upsert(obj("a", fmt.Sprint(i)))
	}
	p.upsert(obj("b", "1"))
	p.delete(searchv1alpha1.ObjectRef{Resource: "pods", UID: "b"})
	if n := p.len(); n != 2 {
		t.Fatalf("%d pending after 1,002 changes of 2 objects, want 2", n)
	}
	b, gens := p.take(10, MaxBatchBytes)
	if len(b.Upserts) != 1 || b.Upserts[0].ResourceVersion != "999" || len(b.Deletes) != 1 || b.Deletes[0].UID != "b" {
		t.Fatalf("batch %+v, want a's last version and b's delete", b)
	}
	p.done(gens)
	if n := p.len(); n != 0 {
		t.Errorf("%d pending after the batch was acknowledged", n)
	}
}

func TestPendingKeepsWhatChangedInFlight(t *testing.T) {
	p := newPending()
	p.upsert(obj("a", "1"))
	p.upsert(obj("b", "1"))
	_, gens := p.take(10, MaxBatchBytes)
	p.upsert(obj("a", "2"))
	p.done(gens)
	b, _ := p.take(10, MaxBatchBytes)
	if len(b.Upserts) != 1 || b.Upserts[0].ResourceVersion != "2" {
		t.Errorf("after the ack: %+v, want a at version 2 only", b.Upserts)
	}
}

func TestPendingBatchLimits(t *testing.T) {
	p := newPending()
	for i := range 1200 {
		p.upsert(obj(fmt.Sprint(i), "1"))
	}
	b, _ := p.take(MaxBatchObjects, MaxBatchBytes)
	if len(b.Upserts) != MaxBatchObjects {
		t.Errorf("%d objects in a batch, want %d", len(b.Upserts), MaxBatchObjects)
	}
	big := obj("big", "1")
	big.Labels = map[string]string{}
	for i := range 100 {
		big.Labels[fmt.Sprint("k", i)] = string(make([]byte, 1000))
	}
	p = newPending()
	for i := range 50 {
		o := big
		o.UID = types.UID(fmt.Sprint(i))
		p.upsert(o)
	}
	b, _ = p.take(MaxBatchObjects, MaxBatchBytes)
	if n := len(b.Upserts); n >= 50 || n == 0 {
		t.Errorf("%d objects of 100 kB in one batch, want about %d", n, MaxBatchBytes/100_000)
	}
}
