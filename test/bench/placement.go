package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	"github.com/flotilla-io/flotilla/hub/clusterset"
	"github.com/flotilla-io/flotilla/hub/placement/scheduler"
)

// placementRuns is how many times each figure is measured; the median is
// shown (times are medians unless the row says "first ever").
const placementRuns = 15

// benchPlacement times the pure scheduler, in this process, for one
// placement that uses every feature at once (label, claim and CEL
// predicates, tolerations, Balance, Steady, allocatable CPU and an AddOn
// score, a spread constraint and decision groups) over 1,000 and 5,000
// clusters: the first scheduling, and a rescheduling with the previous
// decisions after one cluster changed, as the controller does on an event.
func benchPlacement(_ context.Context, _ *env) error {
	for i, n := range []int{1000, 5000} {
		in := placementInput(n)
		if i == 0 {
			start := time.Now()
			cold := scheduler.Schedule(in)
			if cold.Misconfigured != nil {
				return fmt.Errorf("the benchmark placement is misconfigured: %w", cold.Misconfigured)
			}
			row(fmt.Sprintf("first ever, %d clusters (CEL compiled)", n), fmt.Sprintf("%.1f ms", ms(time.Since(start))), "< 1 s")
		}
		first, firstTime := medianSchedule(in)
		row(fmt.Sprintf("schedule, %d clusters", n), fmt.Sprintf("%.1f ms", ms(firstTime)), "< 1 s")

		again := in
		again.Previous = sets.New[string]()
		for _, d := range first.Decisions {
			again.Previous.Insert(d.ClusterName)
		}
		again.Clusters = slices.Clone(in.Clusters)
		changed := again.Clusters[n/2].DeepCopy()
		changed.Labels["env"] = "retired"
		again.Clusters[n/2] = changed
		res, againTime := medianSchedule(again)
		row(fmt.Sprintf("reschedule, %d clusters, one changed", n), fmt.Sprintf("%.1f ms", ms(againTime)), "< 1 s")
		row("  chosen / PlacementDecisions / groups", fmt.Sprintf("%d / %d / %d",
			len(res.Decisions), len(res.PlacementDecisions), len(res.DecisionGroups)), "")
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// medianSchedule runs the scheduler placementRuns times and returns the
// last result and the median time.
func medianSchedule(in scheduler.Input) (scheduler.Result, time.Duration) {
	var res scheduler.Result
	times := make([]time.Duration, 0, placementRuns)
	for range placementRuns {
		start := time.Now()
		res = scheduler.Schedule(in)
		times = append(times, time.Since(start))
	}
	slices.Sort(times)
	return res, times[len(times)/2]
}

// placementInput builds a hub of n clusters in three sets over five zones,
// with claims, taints, allocatable and scores, and the benchmark placement.
func placementInput(n int) scheduler.Input {
	now := time.Now()
	sets := []string{"default", "prod", "edge"}
	envs := []string{"prod", "prod", "staging", "dev"}
	in := scheduler.Input{Now: now, Scores: map[string]map[string]*clusterv1alpha1.AddOnPlacementScore{}, DecisionCounts: map[string]int{}}
	for i := range n {
		name := fmt.Sprintf("cluster-%05d", i)
		mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			clusterv1beta2.ClusterSetLabel: sets[i%len(sets)],
			"env":                          envs[i%len(envs)],
			"zone":                         fmt.Sprintf("zone-%d", i%5),
		}}}
		mc.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{
			{Name: clusterv1.ClusterClaimPlatform, Value: []string{"AWS", "GCP", "Azure"}[i%3]},
			{Name: clusterv1.ClusterClaimKubeVersion, Value: fmt.Sprintf("v1.%d.0", 28+i%4)},
		}
		mc.Status.Version.Kubernetes = fmt.Sprintf("v1.%d.0", 28+i%4)
		mc.Status.Allocatable = clusterv1.ResourceList{
			clusterv1.ResourceCPU:    *resource.NewQuantity(int64(4+i%61), resource.DecimalSI),
			clusterv1.ResourceMemory: *resource.NewQuantity(int64(8+i%120)<<30, resource.BinarySI),
		}
		if i%17 == 0 {
			mc.Spec.Taints = []clusterv1.Taint{{Key: clusterv1.ManagedClusterTaintUnreachable, Effect: clusterv1.TaintEffectNoSelect, TimeAdded: metav1.NewTime(now)}}
		}
		if i%11 == 0 {
			mc.Spec.Taints = append(mc.Spec.Taints, clusterv1.Taint{Key: "spot", Effect: clusterv1.TaintEffectPreferNoSelect, TimeAdded: metav1.NewTime(now)})
		}
		in.Clusters = append(in.Clusters, mc)
		in.Scores[name] = map[string]*clusterv1alpha1.AddOnPlacementScore{"usage": {
			ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "usage"},
			Status:     clusterv1alpha1.AddOnPlacementScoreStatus{Scores: []clusterv1alpha1.AddOnPlacementScoreItem{{Name: "cpuFree", Value: int32(i%201 - 100)}}},
		}}
		in.DecisionCounts[name] = i % 7
	}
	for _, s := range sets {
		set := clusterset.DefaultSet()
		set.Name = s
		in.ClusterSets = append(in.ClusterSets, set)
		in.Bindings = append(in.Bindings, &clusterv1beta2.ManagedClusterSetBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: s}, Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: s}})
	}
	weight := func(w int32) *int32 { return &w }
	in.Placement = &clusterv1beta1.Placement{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "bench"},
		Spec: clusterv1beta1.PlacementSpec{
			ClusterSets:      []string{"prod", "default"},
			NumberOfClusters: ptr.To[int32](250),
			Predicates: []clusterv1beta1.ClusterPredicate{
				{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
					LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
					ClaimSelector: clusterv1beta1.ClusterClaimSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
						{Key: clusterv1.ClusterClaimPlatform, Operator: metav1.LabelSelectorOpIn, Values: []string{"AWS", "GCP"}}}},
				}},
				{RequiredClusterSelector: clusterv1beta1.ClusterSelector{CelSelector: clusterv1beta1.ClusterCelSelector{CelExpressions: []string{
					`managedCluster.metadata.labels["env"] == "staging"`,
					`semver(managedCluster.status.version.kubernetes.substring(1)).isGreaterThan(semver("1.29.0"))`,
				}}}},
			},
			PrioritizerPolicy: clusterv1beta1.PrioritizerPolicy{Configurations: []clusterv1beta1.PrioritizerConfig{
				{ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{Type: clusterv1beta1.ScoreCoordinateTypeBuiltIn, BuiltIn: clusterv1beta1.PrioritizerResourceAllocatableCPU}, Weight: weight(2)},
				{ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{Type: clusterv1beta1.ScoreCoordinateTypeAddOn,
					AddOn: &clusterv1beta1.AddOnScore{ResourceName: "usage", ScoreName: "cpuFree"}}, Weight: weight(1)},
			}},
			Tolerations: []clusterv1beta1.Toleration{{Key: "spot", Operator: clusterv1beta1.TolerationOpExists, Effect: clusterv1.TaintEffectPreferNoSelect}},
			SpreadPolicy: clusterv1beta1.SpreadPolicy{SpreadConstraints: []clusterv1beta1.SpreadConstraintsTerm{
				{TopologyKey: "zone", TopologyKeyType: clusterv1beta1.TopologyKeyTypeLabel, MaxSkew: 1, WhenUnsatisfiable: clusterv1beta1.DoNotSchedule}}},
			DecisionStrategy: clusterv1beta1.DecisionStrategy{GroupStrategy: clusterv1beta1.GroupStrategy{
				DecisionGroups: []clusterv1beta1.DecisionGroup{{GroupName: "canary", ClusterSelector: clusterv1beta1.GroupClusterSelector{
					LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"zone": "zone-0"}}}}},
				ClustersPerDecisionGroup: intstr.FromString("25%"),
			}},
		},
	}
	return in
}
