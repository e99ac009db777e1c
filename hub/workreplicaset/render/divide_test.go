package render

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// named returns clusters with the given names and no labels.
func named(names ...string) []Cluster {
	out := make([]Cluster, len(names))
	for i, n := range names {
		out[i] = Cluster{Name: n}
	}
	return out
}

// weight is a weights entry for the named clusters.
func weight(w int32, min, max *int32, names ...string) workv1alpha1.ClusterWeight {
	return workv1alpha1.ClusterWeight{ClusterNames: names, Weight: w, MinReplicas: min, MaxReplicas: max}
}

// withCapacity is a cluster that reports allocatable cpu and memory.
func withCapacity(name, cpu, memory string) Cluster {
	alloc := corev1.ResourceList{}
	if cpu != "" {
		alloc[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if memory != "" {
		alloc[corev1.ResourceMemory] = resource.MustParse(memory)
	}
	return Cluster{Name: name, Allocatable: alloc}
}

func TestDivide(t *testing.T) {
	labelled := []Cluster{
		{Name: "eu-1", Labels: map[string]string{"region": "eu"}},
		{Name: "eu-2", Labels: map[string]string{"region": "eu"}},
		{Name: "us-1", Labels: map[string]string{"region": "us"}},
	}
	cases := []struct {
		name     string
		div      workv1alpha1.ReplicaDivision
		total    int32
		clusters []Cluster
		want     map[string]int32
	}{{
		name:     "weights 2:1 over 3 replicas give 2 and 1",
		div:      workv1alpha1.ReplicaDivision{Weights: []workv1alpha1.ClusterWeight{weight(2, nil, nil, "a"), weight(1, nil, nil, "b")}},
		total:    3,
		clusters: named("a", "b"),
		want:     map[string]int32{"a": 2, "b": 1},
	}, {
		name:     "equal weights: the leftover goes to the name that sorts first",
		total:    5,
		clusters: named("c", "a", "b"),
		want:     map[string]int32{"a": 2, "b": 2, "c": 1},
	}, {
		name:     "zero replicas",
		total:    0,
		clusters: named("a", "b"),
		want:     map[string]int32{"a": 0, "b": 0},
	}, {
		name:     "the first entry that selects a cluster wins",
		div:      workv1alpha1.ReplicaDivision{Weights: []workv1alpha1.ClusterWeight{weight(3, nil, nil, "b"), weight(0, nil, nil, "a", "b")}},
		total:    8,
		clusters: named("a", "b", "c"),
		want:     map[string]int32{"a": 0, "b": 6, "c": 2},
	}, {
		name: "a selector picks clusters by label; others weigh defaultWeight",
		div: workv1alpha1.ReplicaDivision{
			DefaultWeight: ptr.To[int32](2),
			Weights:       []workv1alpha1.ClusterWeight{{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu"}}, Weight: 1}},
		},
		total:    8,
		clusters: labelled,
		want:     map[string]int32{"eu-1": 2, "eu-2": 2, "us-1": 4},
	}, {
		name:     "defaultWeight 0 leaves unselected clusters out",
		div:      workv1alpha1.ReplicaDivision{DefaultWeight: ptr.To[int32](0), Weights: []workv1alpha1.ClusterWeight{weight(1, nil, nil, "a")}},
		total:    4,
		clusters: named("a", "b"),
		want:     map[string]int32{"a": 4, "b": 0},
	}, {
		name:     "a max spills the rest over to the others in proportion",
		div:      workv1alpha1.ReplicaDivision{Weights: []workv1alpha1.ClusterWeight{weight(8, nil, ptr.To[int32](2), "a"), weight(1, nil, nil, "b"), weight(3, nil, nil, "c")}},
		total:    10,
		clusters: named("a", "b", "c"),
		want:     map[string]int32{"a": 2, "b": 2, "c": 6},
	}, {
		name:     "a min takes its replicas first",
		div:      workv1alpha1.ReplicaDivision{Weights: []workv1alpha1.ClusterWeight{weight(1, ptr.To[int32](3), nil, "a")}},
		total:    4,
		clusters: named("a", "b", "c"),
		want:     map[string]int32{"a": 3, "b": 1, "c": 0},
	}, {
		name:     "weight 0 with a min gets exactly its min",
		div:      workv1alpha1.ReplicaDivision{Weights: []workv1alpha1.ClusterWeight{weight(0, ptr.To[int32](2), nil, "a")}},
		total:    5,
		clusters: named("a", "b"),
		want:     map[string]int32{"a": 2, "b": 3},
	}, {
		name:     "every weight 0 is fine when the mins cover the total",
		div:      workv1alpha1.ReplicaDivision{DefaultWeight: ptr.To[int32](0), Weights: []workv1alpha1.ClusterWeight{weight(0, ptr.To[int32](1), nil, "a", "b")}},
		total:    2,
		clusters: named("a", "b"),
		want:     map[string]int32{"a": 1, "b": 1},
	}, {
		name:     "allocatable cpu times weight",
		div:      workv1alpha1.ReplicaDivision{Type: workv1alpha1.ReplicaDivisionAllocatable, Weights: []workv1alpha1.ClusterWeight{weight(2, nil, nil, "small")}},
		total:    8,
		clusters: []Cluster{withCapacity("big", "4", "1Gi"), withCapacity("small", "500m", "64Gi"), withCapacity("none", "", "")},
		want:     map[string]int32{"big": 6, "small": 2, "none": 0},
	}, {
		name:     "allocatable memory",
		div:      workv1alpha1.ReplicaDivision{Type: workv1alpha1.ReplicaDivisionAllocatable, Resource: "memory"},
		total:    9,
		clusters: []Cluster{withCapacity("big", "1", "1Ti"), withCapacity("small", "64", "512Gi")},
		want:     map[string]int32{"big": 6, "small": 3},
	}, {
		name:     "huge memory times a huge weight does not overflow",
		div:      workv1alpha1.ReplicaDivision{Type: workv1alpha1.ReplicaDivisionAllocatable, Resource: "memory", DefaultWeight: ptr.To[int32](1 << 30)},
		total:    4,
		clusters: []Cluster{withCapacity("a", "", "3Ei"), withCapacity("b", "", "1Ei")},
		want:     map[string]int32{"a": 3, "b": 1},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Divide(&tc.div, tc.total, tc.clusters)
			if err != nil {
				t.Fatalf("Divide: %v", err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("counts (-want +got):\n%s", d)
			}
		})
	}
}

func TestDivideErrors(t *testing.T) {
	cases := []struct {
		name     string
		div      workv1alpha1.ReplicaDivision
		total    int32
		clusters []Cluster
		want     string
	}{{
		name:     "mins above the total",
		div:      workv1alpha1.ReplicaDivision{Weights: []workv1alpha1.ClusterWeight{weight(1, ptr.To[int32](2), nil, "a", "b", "c")}},
		total:    5,
		clusters: named("a", "b", "c"),
		want:     "cannot divide 5 replicas across 3 clusters: their minReplicas add up to 6, more than 5 — lower minReplicas or raise totalReplicas",
	}, {
		name:     "maxes below the total",
		div:      workv1alpha1.ReplicaDivision{Weights: []workv1alpha1.ClusterWeight{weight(1, nil, ptr.To[int32](2), "a", "b")}},
		total:    5,
		clusters: named("a", "b"),
		want:     "cannot divide 5 replicas across 2 clusters: their maxReplicas add up to 4, fewer than 5",
	}, {
		name:     "weight 0 counts only its min towards the room",
		div:      workv1alpha1.ReplicaDivision{Weights: []workv1alpha1.ClusterWeight{weight(1, nil, ptr.To[int32](2), "a"), weight(0, ptr.To[int32](1), ptr.To[int32](9), "b")}},
		total:    4,
		clusters: named("a", "b"),
		want:     "their maxReplicas add up to 3, fewer than 4 (a cluster of weight 0 takes only its minReplicas)",
	}, {
		name:     "every weight 0",
		div:      workv1alpha1.ReplicaDivision{DefaultWeight: ptr.To[int32](0)},
		total:    3,
		clusters: named("a", "b"),
		want:     "every cluster weighs 0, so the 3 replicas beyond their minReplicas (0) have nowhere to go — give some cluster a weight above 0",
	}, {
		name:     "no clusters for a positive total",
		total:    1,
		clusters: nil,
		want:     "cannot divide 1 replicas across 0 clusters",
	}, {
		name:     "allocatable without any report says why",
		div:      workv1alpha1.ReplicaDivision{Type: workv1alpha1.ReplicaDivisionAllocatable},
		total:    2,
		clusters: named("a"),
		want:     "every cluster weighs 0, so the 2 replicas beyond their minReplicas (0) have nowhere to go — give some cluster a weight above 0 (type Allocatable: a cluster weighs its weight times its allocatable cpu; one that reports none weighs 0)",
	}, {
		name:     "min above max in one entry",
		div:      workv1alpha1.ReplicaDivision{Weights: []workv1alpha1.ClusterWeight{weight(1, nil, nil, "x"), weight(1, ptr.To[int32](3), ptr.To[int32](2), "a")}},
		total:    3,
		clusters: named("a"),
		want:     "weights[1]: minReplicas 3 exceeds maxReplicas 2 — make minReplicas at most maxReplicas",
	}, {
		name:  "invalid selector",
		div:   workv1alpha1.ReplicaDivision{Weights: []workv1alpha1.ClusterWeight{{Weight: 1, ClusterSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: "Near"}}}}}},
		total: 1, clusters: named("a"),
		want: `weights[0]: clusterSelector is invalid: "Near" is not a valid label selector operator — fix the selector`,
	}, {
		name:  "unknown type",
		div:   workv1alpha1.ReplicaDivision{Type: "Random"},
		total: 1, clusters: named("a"),
		want: `type "Random" is not Weighted or Allocatable — use one of those`,
	}, {
		name:  "unknown resource",
		div:   workv1alpha1.ReplicaDivision{Type: workv1alpha1.ReplicaDivisionAllocatable, Resource: "gpu"},
		total: 1, clusters: named("a"),
		want: `resource "gpu" is not cpu or memory — use one of those`,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Divide(&tc.div, tc.total, tc.clusters)
			if err == nil {
				t.Fatalf("Divide = %v, want an error containing %q", got, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %q\nwant it to contain %q", err, tc.want)
			}
		})
	}
}
