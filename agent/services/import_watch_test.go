package services

import (
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
)

// TestOwnKindWrites: what the agent wrote is what it reads until its
// informer holds that version or a later one, or the object is gone.
func TestOwnKindWrites(t *testing.T) {
	slice := func(name, uid, rv string) *discoveryv1.EndpointSlice {
		return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: name, UID: types.UID(uid), ResourceVersion: rv,
			Labels: map[string]string{mcsv1beta1.LabelServiceName: "web"},
		}}
	}
	newKind := func() *ownKind {
		k := &ownKind{key: func(o client.Object) string { return labelKey(o, mcsv1beta1.LabelServiceName) }, written: map[string]ownWrite{}}
		k.inf = toolscache.NewSharedIndexInformer(&toolscache.ListWatch{}, &discoveryv1.EndpointSlice{}, 0, toolscache.Indexers{
			bySliceService: func(obj any) ([]string, error) { return []string{k.key(obj.(client.Object))}, nil },
		})
		return k
	}
	rv := func(o client.Object) string {
		if o == nil {
			return "none"
		}
		return o.GetResourceVersion()
	}
	names := func(objs []client.Object) map[string]string {
		out := map[string]string{}
		for _, o := range objs {
			out[o.GetName()] = o.GetResourceVersion()
		}
		return out
	}
	store := func(k *ownKind) toolscache.Indexer { return k.inf.GetIndexer() }

	t.Run("an update the informer has not delivered", func(t *testing.T) {
		k := newKind()
		_ = store(k).Add(slice("a", "u1", "10"))
		k.wrote(slice("a", "u1", "12"))
		if got := rv(k.get("ns", "a")); got != "12" {
			t.Fatalf("before the informer catches up: read version %s, want the agent's 12", got)
		}
		if got := names(k.list(bySliceService, "ns.web", nil)); got["a"] != "12" {
			t.Fatalf("listed %v, want a at 12", got)
		}
		_ = store(k).Update(slice("a", "u1", "11"))
		k.observed(slice("a", "u1", "11"), false)
		if got := rv(k.get("ns", "a")); got != "12" {
			t.Fatalf("an older version delivered: read %s, want 12", got)
		}
		_ = store(k).Update(slice("a", "u1", "12"))
		k.observed(slice("a", "u1", "12"), false)
		if len(k.written) != 0 {
			t.Fatalf("the informer delivered the write, the agent still holds %v", k.written)
		}
		_ = store(k).Update(slice("a", "u1", "15"))
		if got := rv(k.get("ns", "a")); got != "15" {
			t.Fatalf("someone else's later write: read %s, want 15", got)
		}
	})
	t.Run("a create the informer has not delivered", func(t *testing.T) {
		k := newKind()
		k.wrote(slice("b", "u2", "20"))
		if got := names(k.list(bySliceService, "ns.web", nil)); got["b"] != "20" {
			t.Fatalf("listed %v, want the created b", got)
		}
		if got := names(k.list(bySliceService, "ns.other", nil)); len(got) != 0 {
			t.Fatalf("listed %v for another service", got)
		}
		// The informer skipped to a later version (a relist).
		_ = store(k).Add(slice("b", "u2", "25"))
		if got := rv(k.get("ns", "b")); got != "25" {
			t.Fatalf("read %s, want the informer's later 25", got)
		}
	})
	t.Run("a delete the informer has not delivered", func(t *testing.T) {
		k := newKind()
		_ = store(k).Add(slice("c", "u3", "30"))
		k.deleted(slice("c", "u3", "30"))
		if got := k.get("ns", "c"); got != nil {
			t.Fatalf("deleted, still read at %s", rv(got))
		}
		if got := names(k.list(bySliceService, "ns.web", nil)); len(got) != 0 {
			t.Fatalf("deleted, still listed %v", got)
		}
		// Made again by someone else: a new UID.
		_ = store(k).Update(slice("c", "u4", "33"))
		if got := rv(k.get("ns", "c")); got != "33" {
			t.Fatalf("made again: read %s, want 33", got)
		}
	})
	t.Run("a conflict forgets the agent's write", func(t *testing.T) {
		k := newKind()
		_ = store(k).Add(slice("d", "u5", "40"))
		k.wrote(slice("d", "u5", "41"))
		k.forget(slice("d", "u5", "41"))
		if got := rv(k.get("ns", "d")); got != "40" {
			t.Fatalf("read %s, want the informer's 40", got)
		}
	})
}
