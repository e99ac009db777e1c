package work

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

func TestHeldCondition(t *testing.T) {
	key := objectKey{GroupVersionResource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespace: "app", Name: "settings"}
	same := &holder{work: "first", cluster: "c1"}
	other := &holder{work: "first", cluster: "c2", otherHub: true}
	const tail = ", which applied it first; this work does not write it, and applies it once that work lets go of it (is deleted, or drops the manifest)"
	tests := []struct {
		strategy           workv1.UpdateStrategyType
		h                  *holder
		wantReason, wantMs string
	}{
		{workv1.UpdateStrategyTypeUpdate, same, ReasonAppliedByAnotherWork,
			`Not applied: configmaps "settings" in namespace "app" is applied by ManifestWork c1/first of cluster c1` + tail},
		{workv1.UpdateStrategyTypeServerSideApply, same, ReasonApplyConflict,
			`Apply conflict: configmaps "settings" in namespace "app" is applied by ManifestWork c1/first of cluster c1` + tail},
		{workv1.UpdateStrategyTypeUpdate, other, ReasonAppliedByAnotherWork,
			`Not applied: configmaps "settings" in namespace "app" is applied by ManifestWork c2/first of cluster c2 of another hub` + tail},
	}
	for _, tt := range tests {
		reason, msg := heldCondition(&manifest{key: key, strategy: tt.strategy}, tt.h)
		if reason != tt.wantReason || msg != tt.wantMs {
			t.Errorf("heldCondition(%s, %s) = %q, %q; want %q, %q", tt.strategy, tt.h, reason, msg, tt.wantReason, tt.wantMs)
		}
	}
}
