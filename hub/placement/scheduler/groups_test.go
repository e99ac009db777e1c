package scheduler

import (
	"fmt"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
)

func TestGroups(t *testing.T) {
	var clusters []*clusterv1.ManagedCluster
	for i := range 10 {
		env := "dev"
		if i%3 == 0 {
			env = "canary"
		}
		clusters = append(clusters, newCluster(fmt.Sprintf("c%d", i), labelled("env", env)))
	}
	named := func(name, env string) clusterv1beta1.DecisionGroup {
		return clusterv1beta1.DecisionGroup{GroupName: name, ClusterSelector: clusterv1beta1.GroupClusterSelector{
			LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"env": env}}}}
	}
	type group struct {
		name     string
		clusters []string
	}
	tests := []struct {
		name     string
		strategy clusterv1beta1.GroupStrategy
		want     []group
	}{
		{name: "no strategy: one group", want: []group{{"", []string{"c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9"}}}},
		{name: "clustersPerDecisionGroup 4", strategy: clusterv1beta1.GroupStrategy{ClustersPerDecisionGroup: intstr.FromInt32(4)},
			want: []group{{"", []string{"c0", "c1", "c2", "c3"}}, {"", []string{"c4", "c5", "c6", "c7"}}, {"", []string{"c8", "c9"}}}},
		{name: "named groups first, then the rest", strategy: clusterv1beta1.GroupStrategy{DecisionGroups: []clusterv1beta1.DecisionGroup{named("canary", "canary")}},
			want: []group{{"canary", []string{"c0", "c3", "c6", "c9"}}, {"", []string{"c1", "c2", "c4", "c5", "c7", "c8"}}}},
		{name: "named groups are cut too, 30% of 10 is 3", strategy: clusterv1beta1.GroupStrategy{
			DecisionGroups: []clusterv1beta1.DecisionGroup{named("canary", "canary"), named("dev", "dev")}, ClustersPerDecisionGroup: intstr.FromString("30%")},
			want: []group{{"canary", []string{"c0", "c3", "c6"}}, {"canary", []string{"c9"}},
				{"dev", []string{"c1", "c2", "c4"}}, {"dev", []string{"c5", "c7", "c8"}}}},
		{name: "a cluster goes to the first group that matches", strategy: clusterv1beta1.GroupStrategy{
			DecisionGroups: []clusterv1beta1.DecisionGroup{named("canary", "canary"), named("again", "canary")}},
			want: []group{{"canary", []string{"c0", "c3", "c6", "c9"}}, {"", []string{"c1", "c2", "c4", "c5", "c7", "c8"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPlacement(func(p *clusterv1beta1.Placement) { p.Spec.DecisionStrategy.GroupStrategy = tt.strategy })
			r := Schedule(newInput(p, clusters...))
			if r.Misconfigured != nil {
				t.Fatal(r.Misconfigured)
			}
			var got []group
			for _, s := range r.PlacementDecisions {
				g := group{name: s.GroupName}
				for _, d := range s.Decisions {
					g.clusters = append(g.clusters, d.ClusterName)
				}
				got = append(got, g)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("groups %v, want %v", got, tt.want)
			}
			for i, gs := range r.DecisionGroups {
				if int(gs.DecisionGroupIndex) != i || gs.DecisionGroupName != tt.want[i].name || int(gs.ClustersCount) != len(tt.want[i].clusters) ||
					!reflect.DeepEqual(gs.Decisions, []string{DecisionName("p", i+1)}) {
					t.Errorf("status.decisionGroups[%d] = %+v", i, gs)
				}
			}
		})
	}
}

func TestDecisionSlices(t *testing.T) {
	var clusters []*clusterv1.ManagedCluster
	for i := range 250 {
		clusters = append(clusters, newCluster(fmt.Sprintf("c%03d", i)))
	}
	p := newPlacement(func(p *clusterv1beta1.Placement) {
		p.Spec.DecisionStrategy.GroupStrategy.ClustersPerDecisionGroup = intstr.FromInt32(150)
	})
	r := Schedule(newInput(p, clusters...))
	var sizes []int
	for _, s := range r.PlacementDecisions {
		sizes = append(sizes, len(s.Decisions))
		if s.Labels("p")[clusterv1beta1.PlacementLabel] != "p" {
			t.Errorf("%s: labels %v", s.Name, s.Labels("p"))
		}
	}
	if !reflect.DeepEqual(sizes, []int{100, 50, 100}) {
		t.Errorf("slice sizes %v, want [100 50 100]", sizes)
	}
	want := []clusterv1beta1.DecisionGroupStatus{
		{DecisionGroupIndex: 0, Decisions: []string{"p-decision-1", "p-decision-2"}, ClustersCount: 150},
		{DecisionGroupIndex: 1, Decisions: []string{"p-decision-3"}, ClustersCount: 100},
	}
	if !reflect.DeepEqual(r.DecisionGroups, want) {
		t.Errorf("decision groups %+v, want %+v", r.DecisionGroups, want)
	}
	if got := r.PlacementDecisions[2].Labels("p")[clusterv1beta1.DecisionGroupIndexLabel]; got != "1" {
		t.Errorf("p-decision-3 has group index label %q, want 1", got)
	}
}

func TestNoClustersStillOneDecision(t *testing.T) {
	r := Schedule(newInput(newPlacement()))
	if len(r.PlacementDecisions) != 1 || r.PlacementDecisions[0].Name != "p-decision-1" || r.PlacementDecisions[0].Decisions == nil {
		t.Fatalf("placement decisions %+v, want one empty p-decision-1", r.PlacementDecisions)
	}
	if len(r.DecisionGroups) != 1 || r.DecisionGroups[0].ClustersCount != 0 {
		t.Errorf("decision groups %+v, want one empty group", r.DecisionGroups)
	}
}

func TestSortByScore(t *testing.T) {
	p := newPlacement(prioritize(clusterv1beta1.PrioritizerPolicyModeExact, builtIn("ResourceAllocatableCPU", 1)),
		func(p *clusterv1beta1.Placement) { p.Spec.SortBy = clusterv1beta1.SortByScore })
	r := Schedule(newInput(p, newCluster("a", allocatable("1", "")), newCluster("b", allocatable("3", "")), newCluster("c", allocatable("2", ""))))
	var got []string
	for _, d := range r.Decisions {
		got = append(got, d.ClusterName)
	}
	if !reflect.DeepEqual(got, []string{"b", "c", "a"}) {
		t.Errorf("order %v, want [b c a]", got)
	}
}
