package reconcile

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestWritten(t *testing.T) {
	at := func(name, rv string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
	}
	var w Written
	if w.Stale(at("a", "5")) {
		t.Fatal("nothing written yet: not stale")
	}
	w.Record(at("a", "120"))
	for _, tc := range []struct {
		obj   *corev1.ConfigMap
		stale bool
	}{
		{at("a", "119"), true},       // the cache has not seen the write
		{at("a", "99"), true},        // shorter is older
		{at("a", "120"), false},      // the write's own event
		{at("a", "1000"), false},     // written since by someone else
		{at("a", "not-a-rv"), false}, // not comparable: reconcile as before
		{at("b", "1"), false},        // another object
	} {
		if got := w.Stale(tc.obj); got != tc.stale {
			t.Errorf("%s at %q: stale = %v, want %v", tc.obj.Name, tc.obj.ResourceVersion, got, tc.stale)
		}
	}
	w.Forget(client.ObjectKeyFromObject(at("a", "")))
	if w.Stale(at("a", "119")) {
		t.Error("forgotten: not stale")
	}
}

func TestLastWriteExpires(t *testing.T) {
	l := LastWrite{rv: "120", at: time.Now().Add(-staleFor - time.Second)}
	if l.Stale("119") {
		t.Error("a write older than staleFor makes nothing stale: the cache may follow versions that do not compare")
	}
}
