package work

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

func TestWorkConditions(t *testing.T) {
	type cs = map[string]metav1.ConditionStatus
	m := func(conds cs) workv1.ManifestCondition {
		mc := workv1.ManifestCondition{}
		for t, s := range conds {
			mc.Conditions = append(mc.Conditions, metav1.Condition{Type: t, Status: s, Message: t + " is " + string(s)})
		}
		return mc
	}
	ok := cs{workv1.ManifestApplied: "True", workv1.ManifestAvailable: "True"}
	tests := []struct {
		name      string
		manifests []workv1.ManifestCondition
		want      map[string]string // type → status/reason
	}{
		{"no manifests", nil, map[string]string{
			workv1.WorkApplied: "True/AppliedManifestWorkComplete", workv1.WorkAvailable: "True/ResourcesAvailable",
			workv1.WorkProgressing: "False/Completed", workv1.WorkDegraded: "False/ManifestsNotDegraded"}},
		{"all applied and available", []workv1.ManifestCondition{m(ok), m(ok)}, map[string]string{
			workv1.WorkApplied: "True/AppliedManifestWorkComplete", workv1.WorkAvailable: "True/ResourcesAvailable",
			workv1.WorkProgressing: "False/Completed", workv1.WorkDegraded: "False/ManifestsNotDegraded"}},
		{"one failed", []workv1.ManifestCondition{m(ok), m(cs{workv1.ManifestApplied: "False", workv1.ManifestAvailable: "Unknown"})}, map[string]string{
			workv1.WorkApplied: "False/AppliedManifestWorkFailed", workv1.WorkAvailable: "Unknown/ResourcesStatusUnknown",
			workv1.WorkProgressing: "False/Failed", workv1.WorkDegraded: "False/ManifestsNotDegraded"}},
		{"one not available", []workv1.ManifestCondition{m(ok), m(cs{workv1.ManifestApplied: "True", workv1.ManifestAvailable: "False"})}, map[string]string{
			workv1.WorkApplied: "True/AppliedManifestWorkComplete", workv1.WorkAvailable: "False/ResourcesNotAvailable",
			workv1.WorkProgressing: "True/Applying", workv1.WorkDegraded: "False/ManifestsNotDegraded"}},
		{"a rule says progressing", []workv1.ManifestCondition{m(cs{workv1.ManifestApplied: "True", workv1.ManifestAvailable: "True", workv1.ManifestProgressing: "True"})}, map[string]string{
			workv1.WorkApplied: "True/AppliedManifestWorkComplete", workv1.WorkAvailable: "True/ResourcesAvailable",
			workv1.WorkProgressing: "True/Applying", workv1.WorkDegraded: "False/ManifestsNotDegraded"}},
		{"degraded", []workv1.ManifestCondition{m(cs{workv1.ManifestApplied: "True", workv1.ManifestAvailable: "True", workv1.ManifestDegraded: "True"})}, map[string]string{
			workv1.WorkApplied: "True/AppliedManifestWorkComplete", workv1.WorkAvailable: "True/ResourcesAvailable",
			workv1.WorkProgressing: "False/Completed", workv1.WorkDegraded: "True/ManifestsDegraded"}},
		{"complete when every completable manifest is", []workv1.ManifestCondition{
			m(cs{workv1.ManifestApplied: "True", workv1.ManifestAvailable: "True", workv1.ManifestComplete: "True"}), m(ok)}, map[string]string{
			workv1.WorkApplied: "True/AppliedManifestWorkComplete", workv1.WorkAvailable: "True/ResourcesAvailable",
			workv1.WorkProgressing: "False/Completed", workv1.WorkDegraded: "False/ManifestsNotDegraded", workv1.WorkComplete: "True/ManifestsComplete"}},
		{"not complete while one is not", []workv1.ManifestCondition{
			m(cs{workv1.ManifestApplied: "True", workv1.ManifestAvailable: "True", workv1.ManifestComplete: "True"}),
			m(cs{workv1.ManifestApplied: "True", workv1.ManifestAvailable: "True", workv1.ManifestComplete: "False"})}, map[string]string{
			workv1.WorkApplied: "True/AppliedManifestWorkComplete", workv1.WorkAvailable: "True/ResourcesAvailable",
			workv1.WorkProgressing: "False/Completed", workv1.WorkDegraded: "False/ManifestsNotDegraded"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]string{}
			for _, c := range workConditions(tt.manifests, 7) {
				got[c.Type] = string(c.Status) + "/" + c.Reason
				if c.ObservedGeneration != 7 {
					t.Errorf("%s: observedGeneration %d, want 7", c.Type, c.ObservedGeneration)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWorkAppliedMessage(t *testing.T) {
	failed := workv1.ManifestCondition{ResourceMeta: workv1.ManifestResourceMeta{Ordinal: 1}, Conditions: []metav1.Condition{
		{Type: workv1.ManifestApplied, Status: metav1.ConditionFalse, Message: `namespaces "gone" not found`}}}
	c := workConditions([]workv1.ManifestCondition{{}, failed}, 1)[0]
	if want := `Failed to apply 2 of 2 manifests; manifest 1: namespaces "gone" not found`; c.Message != want {
		t.Errorf("message %q, want %q", c.Message, want)
	}
}

func TestMergeConditions(t *testing.T) {
	then := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := time.Date(2026, 5, 1, 12, 0, 0, 500, time.UTC)
	stamp := metav1.NewTime(now.Truncate(time.Second))
	prev := []metav1.Condition{
		{Type: "A", Status: metav1.ConditionTrue, LastTransitionTime: then},
		{Type: "B", Status: metav1.ConditionTrue, LastTransitionTime: then},
		{Type: "Gone", Status: metav1.ConditionTrue, LastTransitionTime: then},
	}
	next := []metav1.Condition{
		{Type: "B", Status: metav1.ConditionFalse, Reason: "Changed"},
		{Type: "A", Status: metav1.ConditionTrue, Reason: "Same", Message: "new message"},
		{Type: "New", Status: metav1.ConditionUnknown},
	}
	want := []metav1.Condition{
		{Type: "B", Status: metav1.ConditionFalse, Reason: "Changed", LastTransitionTime: stamp},
		{Type: "A", Status: metav1.ConditionTrue, Reason: "Same", Message: "new message", LastTransitionTime: then},
		{Type: "New", Status: metav1.ConditionUnknown, LastTransitionTime: stamp},
	}
	if diff := cmp.Diff(want, mergeConditions(prev, next, now)); diff != "" {
		t.Errorf("mergeConditions (-want +got):\n%s", diff)
	}
	if mergeConditions(prev, nil, now) != nil {
		t.Error("no conditions should give nil")
	}
}

func TestTruncate(t *testing.T) {
	long := strings.Repeat("é", maxMessage)
	got := truncate(long)
	if len(got) > maxMessage || !strings.HasSuffix(got, "...") || !strings.HasPrefix(got, "éé") {
		t.Errorf("truncate gave %d bytes ending %q", len(got), got[len(got)-5:])
	}
	if truncate("short") != "short" {
		t.Error("a short message changed")
	}
}
