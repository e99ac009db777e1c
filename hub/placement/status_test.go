package placement

import (
	"errors"
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/hub/placement/scheduler"
)

func TestApplyResult(t *testing.T) {
	satisfied := metav1.Condition{Type: clusterv1beta1.PlacementConditionSatisfied, Status: metav1.ConditionTrue, Reason: clusterv1beta1.ReasonAllDecisionsScheduled}
	groups := []clusterv1beta1.DecisionGroupStatus{{Decisions: []string{"p-decision-1"}, ClustersCount: 2}}
	when := &metav1.Time{Time: time.Now()}
	status := clusterv1beta1.PlacementStatus{}
	applyResult(&status, scheduler.Result{
		Decisions:      []clusterv1beta1.ClusterDecision{{ClusterName: "a"}, {ClusterName: "b"}},
		DecisionGroups: groups, LastScoreUpdateTime: when,
		Conditions: []metav1.Condition{satisfied, {Type: clusterv1beta1.PlacementConditionMisconfigured, Status: metav1.ConditionFalse, Reason: "Succeedconfigured"}},
	})
	if status.NumberOfSelectedClusters != 2 || !reflect.DeepEqual(status.DecisionGroups, groups) || status.LastScoreUpdateTime != when || len(status.Conditions) != 2 {
		t.Fatalf("status %+v", status)
	}

	applyResult(&status, scheduler.Result{Misconfigured: errors.New("bad"),
		Conditions: []metav1.Condition{{Type: clusterv1beta1.PlacementConditionMisconfigured, Status: metav1.ConditionTrue, Reason: "Misconfigured"}}})
	if status.NumberOfSelectedClusters != 2 || !reflect.DeepEqual(status.DecisionGroups, groups) {
		t.Errorf("a misconfigured result changed the selection: %+v", status)
	}
	for _, c := range status.Conditions {
		if c.Type == clusterv1beta1.PlacementConditionMisconfigured && c.Status != metav1.ConditionTrue {
			t.Errorf("Misconfigured not set: %+v", c)
		}
		if c.Type == clusterv1beta1.PlacementConditionSatisfied && c.Status != metav1.ConditionTrue {
			t.Errorf("Satisfied changed by a misconfigured result: %+v", c)
		}
	}
}

func TestChanges(t *testing.T) {
	added, removed := changes(sets.New("a", "b"), []clusterv1beta1.ClusterDecision{{ClusterName: "b"}, {ClusterName: "d"}, {ClusterName: "c"}})
	if !reflect.DeepEqual(added, []string{"c", "d"}) || !reflect.DeepEqual(removed, []string{"a"}) {
		t.Errorf("added %v removed %v", added, removed)
	}
	if got := listNote("added", []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"}); got != "; added a, b, c, d, e, f, g, h, i, j and 2 more" {
		t.Errorf("listNote = %q", got)
	}
}

func TestScoreNames(t *testing.T) {
	p := &clusterv1beta1.Placement{Spec: clusterv1beta1.PlacementSpec{
		PrioritizerPolicy: clusterv1beta1.PrioritizerPolicy{Configurations: []clusterv1beta1.PrioritizerConfig{
			{ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{Type: "AddOn", AddOn: &clusterv1beta1.AddOnScore{ResourceName: "usage", ScoreName: "cpu"}}},
			{ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{Type: "BuiltIn", BuiltIn: "Balance"}},
		}}}}
	if got := scoreNames(p); !reflect.DeepEqual(got, []string{"usage"}) {
		t.Errorf("scoreNames = %v", got)
	}
	p.Spec.Predicates = []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
		CelSelector: clusterv1beta1.ClusterCelSelector{CelExpressions: []string{`managedCluster.scores("x").size() > 0`}}}}}
	if got := scoreNames(p); !reflect.DeepEqual(got, []string{"usage", scoresAny}) {
		t.Errorf("scoreNames with CEL = %v", got)
	}
}
