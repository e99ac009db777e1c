package scheduler

import (
	"testing"
	"time"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
)

func TestPrioritizers(t *testing.T) {
	past, future := now.Add(-time.Minute), now.Add(time.Hour)
	small := newCluster("small", allocatable("2", "4Gi"))
	medium := newCluster("medium", allocatable("4", "16Gi"))
	large := newCluster("large", allocatable("6", "8Gi"))
	silent := newCluster("silent")
	scores := map[string]map[string]*clusterv1alpha1.AddOnPlacementScore{
		"small":  {"usage": score("small", "usage", nil, "cpu", 150)},
		"medium": {"usage": score("medium", "usage", &future, "cpu", -40)},
		"large":  {"usage": score("large", "usage", &past, "cpu", 90)},
	}
	counts := map[string]int{"small": 4, "medium": 2, "elsewhere": 4}
	tests := []struct {
		name       string
		placement  *clusterv1beta1.Placement
		chosen     string
		want       map[string]int64
		wantExpiry time.Time
	}{
		{name: "Additive default: Balance only (Steady is a rule)", placement: newPlacement(), chosen: "large",
			want: map[string]int64{"small": -100, "medium": 0, "large": 100, "silent": 100}},
		{name: "Steady with a negative weight is a score", placement: newPlacement(prioritize(clusterv1beta1.PrioritizerPolicyModeExact, builtIn("Steady", -2))),
			chosen: "large", want: map[string]int64{"small": 0, "medium": 0, "large": -200, "silent": 0}},
		{name: "ResourceAllocatableCPU scales between least and most; silent clusters score least",
			placement: newPlacement(prioritize(clusterv1beta1.PrioritizerPolicyModeExact, builtIn("ResourceAllocatableCPU", 1))),
			want:      map[string]int64{"small": -100, "medium": 0, "large": 100, "silent": -100}},
		{name: "ResourceAllocatableMemory with weight 2",
			placement: newPlacement(prioritize(clusterv1beta1.PrioritizerPolicyModeExact, builtIn("ResourceAllocatableMemory", 2))),
			want:      map[string]int64{"small": -200, "medium": 200, "large": -64, "silent": -200}},
		{name: "Additive adds to the defaults; weight 0 turns Balance off",
			placement: newPlacement(prioritize(clusterv1beta1.PrioritizerPolicyModeAdditive, builtIn("Balance", 0), builtIn("ResourceAllocatableCPU", 3))),
			want:      map[string]int64{"small": -300, "medium": 0, "large": 300, "silent": -300}},
		{name: "AddOn scores, clamped; missing and expired score 0; valid until is reported",
			placement: newPlacement(prioritize(clusterv1beta1.PrioritizerPolicyModeExact, addOn("usage", "cpu", -1))),
			want:      map[string]int64{"small": -100, "medium": 40, "large": 0, "silent": 0}, wantExpiry: future},
		{name: "AddOn score of another name counts 0",
			placement: newPlacement(prioritize(clusterv1beta1.PrioritizerPolicyModeExact, addOn("usage", "memory", 1))),
			want:      map[string]int64{"small": 0, "medium": 0, "large": 0, "silent": 0}, wantExpiry: future},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, err := compile(tt.placement)
			if err != nil {
				t.Fatal(err)
			}
			var cands []*candidate
			for _, c := range []*candidate{{cluster: small}, {cluster: medium}, {cluster: large}, {cluster: silent}} {
				c.chosen = c.cluster.Name == tt.chosen
				cands = append(cands, c)
			}
			in := &Input{Scores: scores, DecisionCounts: counts, Now: now}
			expiry := pl.score(cands, in)
			for _, c := range cands {
				if c.score != tt.want[c.cluster.Name] {
					t.Errorf("%s scored %d, want %d", c.cluster.Name, c.score, tt.want[c.cluster.Name])
				}
			}
			if !expiry.Equal(tt.wantExpiry) {
				t.Errorf("expiry %v, want %v", expiry, tt.wantExpiry)
			}
		})
	}
}
