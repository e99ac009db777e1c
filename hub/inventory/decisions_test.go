package inventory

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/api/multicluster/v1alpha1"
)

func TestSlicesCutAtOneHundred(t *testing.T) {
	for _, tc := range []struct {
		clusters int
		sizes    []int
	}{
		{0, []int{0}},
		{1, []int{1}},
		{100, []int{100}},
		{101, []int{100, 1}},
		{250, []int{100, 100, 50}},
	} {
		t.Run(fmt.Sprint(tc.clusters), func(t *testing.T) {
			var clusters []string
			for i := range tc.clusters {
				clusters = append(clusters, fmt.Sprintf("c%03d", i))
			}
			got := Slices("app", "team", clusters)
			if len(got) != len(tc.sizes) {
				t.Fatalf("%d slices, want %d", len(got), len(tc.sizes))
			}
			next := 0
			for i, s := range got {
				if want := fmt.Sprintf("app-decision-%d", i+1); s.Name != want {
					t.Errorf("slice %d is named %s, want %s", i, s.Name, want)
				}
				if s.Labels[multiclusterv1alpha1.DecisionKeyLabel] != "app" || s.Labels[clusterv1beta1.PlacementLabel] != "app" ||
					s.Labels[multiclusterv1alpha1.PlacementKeyLabel] != "app" || s.Labels[multiclusterv1alpha1.DecisionIndexLabel] != fmt.Sprint(i) {
					t.Errorf("slice %s has labels %v", s.Name, s.Labels)
				}
				if len(s.Decisions) != tc.sizes[i] {
					t.Errorf("slice %s holds %d decisions, want %d", s.Name, len(s.Decisions), tc.sizes[i])
				}
				if s.Decisions == nil {
					t.Errorf("slice %s: decisions is nil, which the API server refuses (required)", s.Name)
				}
				for _, d := range s.Decisions {
					if d.ClusterProfileRef.Name != clusters[next] || d.ClusterProfileRef.Namespace != "team" {
						t.Errorf("slice %s: decision %+v, want cluster %s in team", s.Name, d.ClusterProfileRef, clusters[next])
					}
					next++
				}
			}
			if next != tc.clusters {
				t.Errorf("%d clusters in slices, want %d", next, tc.clusters)
			}
		})
	}
}

func TestClustersInOrderFollowsDecisionNumbers(t *testing.T) {
	decision := func(name string, clusters ...string) *clusterv1beta1.PlacementDecision {
		d := &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Name: name}}
		for _, c := range clusters {
			d.Status.Decisions = append(d.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: c})
		}
		return d
	}
	got := clustersInOrder([]*clusterv1beta1.PlacementDecision{
		decision("p-decision-10", "j"), decision("p-decision-2", "c", "d"), decision("p-decision-1", "b", "a"),
	})
	want := []string{"b", "a", "c", "d", "j"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
