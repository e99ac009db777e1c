package workreplicaset

import (
	"errors"
	"fmt"
	"github.com/flotilla-io/flotilla/internal/rollout"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/hub/failover"
)

// testScope is a replica set with placement "p" choosing clusters, each
// with a work when works names it.
func testScope(clusters []string, works ...string) *scope {
	pt := &placementTarget{name: "p", found: true, decided: true, clusters: clusters, groups: map[string]rollout.Group{}}
	s := &scope{
		mwrs:       &workv1alpha1.ManifestWorkReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app"}},
		placements: []*placementTarget{pt},
		chosen:     map[string]*placementTarget{},
		rendered:   map[string]workv1.ManifestWorkSpec{},
		works:      map[string]*workv1.ManifestWork{},
	}
	for _, c := range clusters {
		s.chosen[c] = pt
		s.rendered[c] = workv1.ManifestWorkSpec{}
	}
	for _, c := range works {
		s.works[c] = &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: c, Name: "app", Generation: 1}}
	}
	return s
}

func TestConditions(t *testing.T) {
	tests := []struct {
		name   string
		scope  func() *scope
		cond   func(*scope) metav1.Condition
		status metav1.ConditionStatus
		reason string
		msg    string
	}{
		{name: "placement missing", cond: placementVerified, status: metav1.ConditionFalse, reason: workv1alpha1.ReasonPlacementDecisionNotFound,
			msg: "Placements [p] do not exist in namespace ns",
			scope: func() *scope {
				s := testScope(nil)
				s.placements[0].found = false
				return s
			}},
		{name: "placement not decided yet", cond: placementVerified, status: metav1.ConditionFalse, reason: workv1alpha1.ReasonPlacementDecisionNotFound,
			msg: "Placements [p] have no PlacementDecisions yet",
			scope: func() *scope {
				s := testScope(nil)
				s.placements[0].decided = false
				return s
			}},
		{name: "no cluster chosen", cond: placementVerified, status: metav1.ConditionFalse, reason: workv1alpha1.ReasonPlacementDecisionEmpty,
			msg: "chose no cluster", scope: func() *scope { return testScope(nil) }},
		{name: "clusters chosen", cond: placementVerified, status: metav1.ConditionTrue, reason: workv1alpha1.ReasonAsExpected,
			msg: "2 clusters chosen", scope: func() *scope { return testScope([]string{"a", "b"}) }},
		{name: "render error", cond: manifestworkApplied, status: metav1.ConditionFalse, reason: workv1alpha1.ReasonNotAsExpected,
			msg: "spec.overrides[0]: bad; the ManifestWorks are left as they are",
			scope: func() *scope {
				s := testScope([]string{"a"}, "a")
				s.invalid = errors.New("spec.overrides[0]: bad")
				return s
			}},
		{name: "render error stops the rollout too", cond: placementRolledOut, status: metav1.ConditionFalse, reason: workv1alpha1.ReasonNotAsExpected,
			msg: "nothing is rolled out until the spec is fixed",
			scope: func() *scope {
				s := testScope([]string{"a"}, "a")
				s.invalid = errors.New("spec.overrides[0]: bad")
				return s
			}},
		{name: "a work of someone else", cond: manifestworkApplied, status: metav1.ConditionFalse, reason: workv1alpha1.ReasonNotAsExpected,
			msg: "a ManifestWork named app that this replica set does not own exists in the namespaces of clusters [b]",
			scope: func() *scope {
				s := testScope([]string{"a", "b"}, "a")
				s.conflicts = []string{"b"}
				return s
			}},
		{name: "works still missing", cond: manifestworkApplied, status: metav1.ConditionFalse, reason: workv1alpha1.ReasonProcessing,
			msg: "1 of 3 chosen clusters have their ManifestWork; the hub namespaces of clusters [c] do not exist yet",
			scope: func() *scope {
				s := testScope([]string{"a", "b", "c"}, "a")
				s.missingNamespace = []string{"c"}
				return s
			}},
		{name: "every work exists, with one kept for failover", cond: manifestworkApplied, status: metav1.ConditionTrue, reason: workv1alpha1.ReasonAsExpected,
			msg: "1 ManifestWorks exist, one for each chosen cluster; 1 work kept on tainted cluster old (unreachable) until a is Available",
			scope: func() *scope {
				s := testScope([]string{"a"}, "a", "old")
				s.kept = map[string]failover.Kept{"old": {Taint: clusterv1.ManagedClusterTaintUnreachable, Replacement: "a"}}
				return s
			}},
		{name: "a work kept without a replacement says until when", cond: placementRolledOut, status: metav1.ConditionTrue, reason: workv1alpha1.ReasonComplete,
			msg: "rolled out to 1 clusters; 1 work kept on tainted cluster old (unavailable) until it is chosen again, a replacement is Available, or the failover grace ends at 2026-01-01T12:05:00Z",
			scope: func() *scope {
				s := testScope([]string{"a"}, "a", "old")
				s.placements[0].rollout = rollout.Result{Complete: true, Succeeded: 1}
				s.kept = map[string]failover.Kept{"old": {Taint: clusterv1.ManagedClusterTaintUnavailable, Until: time.Date(2026, 1, 1, 12, 5, 0, 0, time.UTC)}}
				return s
			}},
		{name: "a missing placement is waited for, not complete", cond: placementRolledOut, status: metav1.ConditionFalse, reason: workv1alpha1.ReasonProgressing,
			msg: "Placement p: waiting for it to be created",
			scope: func() *scope {
				s := testScope(nil)
				s.placements[0].found, s.placements[0].decided = false, false
				s.placements[0].rollout = rollout.Result{Complete: true}
				return s
			}},
		{name: "an undecided placement is waited for", cond: placementRolledOut, status: metav1.ConditionFalse, reason: workv1alpha1.ReasonProgressing,
			msg: "Placement p: waiting for its first decision",
			scope: func() *scope {
				s := testScope(nil)
				s.placements[0].decided = false
				s.placements[0].rollout = rollout.Result{Complete: true}
				return s
			}},
		{name: "an unreadable failover grace is reported", cond: placementVerified, status: metav1.ConditionTrue, reason: workv1alpha1.ReasonAsExpected,
			msg: "1 clusters chosen; annotation cluster.flotilla.io/failover-grace",
			scope: func() *scope {
				s := testScope([]string{"a"})
				s.placements[0].graceErr = errors.New("annotation cluster.flotilla.io/failover-grace is bad")
				return s
			}},
		{name: "rollout stopped names the failures", cond: placementRolledOut, status: metav1.ConditionFalse, reason: workv1alpha1.ReasonNotAsExpected,
			msg: "Placement p: rollout stopped, 2 clusters failed, more than maxFailures 1: a (Degraded: Pod web-1 is in CrashLoopBackOff), b (Degraded: Pod web-1 is in CrashLoopBackOff)",
			scope: func() *scope {
				s := testScope([]string{"a", "b"}, "a", "b")
				for _, w := range s.works {
					w.Status.Conditions = []metav1.Condition{{Type: workv1.WorkDegraded, Status: metav1.ConditionTrue, ObservedGeneration: w.Generation, Message: "Pod web-1 is in CrashLoopBackOff"}}
				}
				s.placements[0].rollout = rollout.Result{Stopped: true, StopReason: "2 clusters failed, more than maxFailures 1",
					Failed: []rollout.Failure{{Cluster: "a", Why: "Degraded"}, {Cluster: "b", Why: "Degraded"}}}
				return s
			}},
		{name: "rollout under way", cond: placementRolledOut, status: metav1.ConditionFalse, reason: workv1alpha1.ReasonProgressing,
			msg: "Placement p: 1 of 3 clusters rolled out, 1 in progress, 0 failed",
			scope: func() *scope {
				s := testScope([]string{"a", "b", "c"}, "a", "b")
				s.placements[0].rollout = rollout.Result{Succeeded: 1, InFlight: 1}
				return s
			}},
		{name: "rollout complete", cond: placementRolledOut, status: metav1.ConditionTrue, reason: workv1alpha1.ReasonComplete,
			msg: "rolled out to 2 clusters",
			scope: func() *scope {
				s := testScope([]string{"a", "b"}, "a", "b")
				s.placements[0].rollout = rollout.Result{Complete: true, Succeeded: 2}
				return s
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.cond(tc.scope())
			if got.Status != tc.status || got.Reason != tc.reason || !strings.Contains(got.Message, tc.msg) {
				t.Errorf("got %s %s %q; want %s %s with %q", got.Status, got.Reason, got.Message, tc.status, tc.reason, tc.msg)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	s := testScope([]string{"a", "b", "c"}, "a", "b", "kept")
	s.placements[0].groups = map[string]rollout.Group{"a": {Index: 0}, "b": {Index: 1}, "c": {Index: 1}}
	cond := func(condType string) metav1.Condition {
		return metav1.Condition{Type: condType, Status: metav1.ConditionTrue, ObservedGeneration: 1}
	}
	s.works["a"].Status.Conditions = []metav1.Condition{cond(workv1.WorkApplied), cond(workv1.WorkAvailable)}
	s.works["b"].Status.Conditions = []metav1.Condition{cond(workv1.WorkApplied), cond(workv1.WorkDegraded), cond(workv1.WorkProgressing)}
	s.works["b"].Spec.DeleteOption = &workv1.DeleteOption{PropagationPolicy: "Orphan"}
	// A work kept for failover on a cluster no longer chosen is not counted:
	// applied never reads more than the desired total.
	s.works["kept"].Status.Conditions = []metav1.Condition{cond(workv1.WorkApplied), cond(workv1.WorkAvailable)}

	total, placements := summarize(s)
	want := workv1alpha1.ManifestWorkReplicaSetSummary{Total: 2, DesiredTotal: 3, Applied: 2, Available: 1, Degraded: 1, Progressing: 1, Updated: 1}
	if total != want {
		t.Errorf("summary = %+v, want %+v", total, want)
	}
	wantP := workv1alpha1.ManifestWorkReplicaSetSummary{Total: 2, DesiredTotal: 3, Applied: 2, Available: 1, Degraded: 1, Progressing: 1, Updated: 1}
	if len(placements) != 1 || placements[0].Summary != wantP || placements[0].AvailableDecisionGroups != "1/2" {
		t.Errorf("placement summary = %+v, want %+v with 1/2 groups available", placements, wantP)
	}
}

func TestShortList(t *testing.T) {
	var items []string
	for i := range 13 {
		items = append(items, fmt.Sprint(i))
	}
	if got, want := shortList(items), "0, 1, 2, 3, 4, 5, 6, 7, 8, 9 and 3 more"; got != want {
		t.Errorf("shortList = %q, want %q", got, want)
	}
}
