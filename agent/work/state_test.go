package work

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

func TestWorkStateStale(t *testing.T) {
	at := func(rv string) *workv1.ManifestWork {
		return &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}}
	}
	for _, tc := range []struct {
		written, cached string
		stale           bool
	}{
		{"", "5", false},           // nothing written yet
		{"120", "119", true},       // the cache has not seen the agent's write
		{"120", "99", true},        // shorter is older
		{"120", "120", false},      // the write's own event
		{"120", "1000", false},     // someone wrote after the agent
		{"120", "not-a-rv", false}, // not comparable: reconcile as before
	} {
		st := &workState{written: tc.written}
		if got := st.stale(at(tc.cached)); got != tc.stale {
			t.Errorf("written %q, cached %q: stale = %v, want %v", tc.written, tc.cached, got, tc.stale)
		}
	}
}
