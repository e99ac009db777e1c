package scheduler

import (
	"fmt"
	"strings"
	"testing"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
)

func spread(key string, typ clusterv1beta1.TopologyKeyType, maxSkew int32, when clusterv1beta1.UnsatisfiableMaxSkewAction) placementOpt {
	return func(p *clusterv1beta1.Placement) {
		p.Spec.SpreadPolicy.SpreadConstraints = append(p.Spec.SpreadPolicy.SpreadConstraints, clusterv1beta1.SpreadConstraintsTerm{
			TopologyKey: key, TopologyKeyType: typ, MaxSkew: maxSkew, WhenUnsatisfiable: when})
	}
}

// zoned returns n clusters per zone, named <zone>-<i>, with CPU falling
// with i so that the first of each zone scores best.
func zoned(perZone map[string]int) []*clusterv1.ManagedCluster {
	var out []*clusterv1.ManagedCluster
	for zone, n := range perZone {
		for i := range n {
			out = append(out, newCluster(fmt.Sprintf("%s-%d", zone, i), labelled("zone", zone), claimed("region", zone),
				allocatable(fmt.Sprint(100-i), "")))
		}
	}
	return out
}

func zonesOf(r Result) map[string]int {
	out := map[string]int{}
	for _, d := range r.Decisions {
		out[d.ClusterName[:1]]++
	}
	return out
}

func TestSpread(t *testing.T) {
	cpu := prioritize(clusterv1beta1.PrioritizerPolicyModeExact, builtIn("ResourceAllocatableCPU", 1))
	tests := []struct {
		name      string
		placement *clusterv1beta1.Placement
		clusters  []*clusterv1.ManagedCluster
		want      map[string]int
		wantMsg   string
	}{
		{name: "no spread: the best scores, all in one zone",
			placement: newPlacement(count(3), cpu),
			clusters:  append(zoned(map[string]int{"a": 3, "b": 3}), newCluster("x-best", labelled("zone", "a"), allocatable("1000", ""))),
			want:      map[string]int{"a": 2, "x": 1}},
		{name: "ScheduleAnyway spreads evenly when it can",
			placement: newPlacement(count(4), cpu, spread("zone", clusterv1beta1.TopologyKeyTypeLabel, 1, clusterv1beta1.ScheduleAnyway)),
			clusters:  zoned(map[string]int{"a": 4, "b": 4}), want: map[string]int{"a": 2, "b": 2}},
		{name: "ScheduleAnyway goes on when a zone runs out",
			placement: newPlacement(count(4), cpu, spread("zone", clusterv1beta1.TopologyKeyTypeLabel, 1, clusterv1beta1.ScheduleAnyway)),
			clusters:  zoned(map[string]int{"a": 1, "b": 5}), want: map[string]int{"a": 1, "b": 3}},
		{name: "DoNotSchedule stops at maxSkew",
			placement: newPlacement(count(4), cpu, spread("zone", clusterv1beta1.TopologyKeyTypeLabel, 1, clusterv1beta1.DoNotSchedule)),
			clusters:  zoned(map[string]int{"a": 1, "b": 5}), want: map[string]int{"a": 1, "b": 2},
			wantMsg: "3 of 4 requested clusters selected: of the 6 clusters in ManagedClusterSets [default], 6 qualify; 3 were left out to keep the DoNotSchedule spread constraint on zone within its maxSkew"},
		{name: "maxSkew 2 lets the better zone take more",
			placement: newPlacement(count(5), cpu, spread("region", clusterv1beta1.TopologyKeyTypeClaim, 2, clusterv1beta1.DoNotSchedule)),
			clusters:  zoned(map[string]int{"a": 1, "b": 5}), want: map[string]int{"a": 1, "b": 3}},
		{name: "DoNotSchedule leaves out clusters without the key",
			placement: newPlacement(count(3), spread("zone", clusterv1beta1.TopologyKeyTypeLabel, 1, clusterv1beta1.DoNotSchedule)),
			clusters:  append(zoned(map[string]int{"a": 1, "b": 1}), newCluster("nozone")),
			want:      map[string]int{"a": 1, "b": 1},
			wantMsg:   "1 lack the topology key zone of a DoNotSchedule spread constraint"},
		{name: "ScheduleAnyway takes clusters without the key last",
			placement: newPlacement(count(3), spread("zone", clusterv1beta1.TopologyKeyTypeLabel, 1, clusterv1beta1.ScheduleAnyway)),
			clusters:  append(zoned(map[string]int{"a": 2}), newCluster("nozone")),
			want:      map[string]int{"a": 2, "n": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Schedule(newInput(tt.placement, tt.clusters...))
			if r.Misconfigured != nil {
				t.Fatal(r.Misconfigured)
			}
			got := zonesOf(r)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("clusters per zone %v, want %v (%v)", got, tt.want, names(r))
			}
			if msg := condition(r, clusterv1beta1.PlacementConditionSatisfied).Message; tt.wantMsg != "" && !strings.Contains(msg, tt.wantMsg) {
				t.Errorf("message %q does not contain %q", msg, tt.wantMsg)
			}
		})
	}
}
