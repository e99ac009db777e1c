package scheduler

import (
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	"github.com/flotilla-io/flotilla/hub/clusterset"
)

// now is the time every test schedules at.
var now = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

type clusterOpt func(*clusterv1.ManagedCluster)

// newCluster is a cluster in the default set.
func newCluster(name string, opts ...clusterOpt) *clusterv1.ManagedCluster {
	c := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name,
		Labels: map[string]string{clusterv1beta2.ClusterSetLabel: clusterv1beta2.DefaultManagedClusterSetName}}}
	for _, o := range opts {
		o(c)
	}
	return c
}

func labelled(kv ...string) clusterOpt {
	return func(c *clusterv1.ManagedCluster) {
		for i := 0; i < len(kv); i += 2 {
			c.Labels[kv[i]] = kv[i+1]
		}
	}
}

func inSet(set string) clusterOpt { return labelled(clusterv1beta2.ClusterSetLabel, set) }

func claimed(kv ...string) clusterOpt {
	return func(c *clusterv1.ManagedCluster) {
		for i := 0; i < len(kv); i += 2 {
			c.Status.ClusterClaims = append(c.Status.ClusterClaims, clusterv1.ManagedClusterClaim{Name: kv[i], Value: kv[i+1]})
		}
	}
}

func tainted(key, value string, effect clusterv1.TaintEffect, added time.Time) clusterOpt {
	return func(c *clusterv1.ManagedCluster) {
		c.Spec.Taints = append(c.Spec.Taints, clusterv1.Taint{Key: key, Value: value, Effect: effect, TimeAdded: metav1.NewTime(added)})
	}
}

func allocatable(cpu, memory string) clusterOpt {
	return func(c *clusterv1.ManagedCluster) {
		c.Status.Allocatable = clusterv1.ResourceList{}
		if cpu != "" {
			c.Status.Allocatable[clusterv1.ResourceCPU] = resource.MustParse(cpu)
		}
		if memory != "" {
			c.Status.Allocatable[clusterv1.ResourceMemory] = resource.MustParse(memory)
		}
	}
}

type placementOpt func(*clusterv1beta1.Placement)

func newPlacement(opts ...placementOpt) *clusterv1beta1.Placement {
	p := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Generation: 1}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func count(n int32) placementOpt {
	return func(p *clusterv1beta1.Placement) { p.Spec.NumberOfClusters = ptr.To(n) }
}

func requireLabels(kv ...string) placementOpt {
	return func(p *clusterv1beta1.Placement) {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		p.Spec.Predicates = append(p.Spec.Predicates, clusterv1beta1.ClusterPredicate{
			RequiredClusterSelector: clusterv1beta1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: m}}})
	}
}

func requireCEL(exprs ...string) placementOpt {
	return func(p *clusterv1beta1.Placement) {
		p.Spec.Predicates = append(p.Spec.Predicates, clusterv1beta1.ClusterPredicate{
			RequiredClusterSelector: clusterv1beta1.ClusterSelector{CelSelector: clusterv1beta1.ClusterCelSelector{CelExpressions: exprs}}})
	}
}

func prioritize(mode clusterv1beta1.PrioritizerPolicyModeType, cfgs ...clusterv1beta1.PrioritizerConfig) placementOpt {
	return func(p *clusterv1beta1.Placement) {
		p.Spec.PrioritizerPolicy = clusterv1beta1.PrioritizerPolicy{Mode: mode, Configurations: cfgs}
	}
}

func builtIn(name string, weight int32) clusterv1beta1.PrioritizerConfig {
	return clusterv1beta1.PrioritizerConfig{ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{Type: clusterv1beta1.ScoreCoordinateTypeBuiltIn, BuiltIn: name}, Weight: ptr.To(weight)}
}

func addOn(resourceName, scoreName string, weight int32) clusterv1beta1.PrioritizerConfig {
	return clusterv1beta1.PrioritizerConfig{ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{Type: clusterv1beta1.ScoreCoordinateTypeAddOn,
		AddOn: &clusterv1beta1.AddOnScore{ResourceName: resourceName, ScoreName: scoreName}}, Weight: ptr.To(weight)}
}

func tolerate(t clusterv1beta1.Toleration) placementOpt {
	return func(p *clusterv1beta1.Placement) { p.Spec.Tolerations = append(p.Spec.Tolerations, t) }
}

func useSets(sets ...string) placementOpt {
	return func(p *clusterv1beta1.Placement) { p.Spec.ClusterSets = sets }
}

func binding(ns, set string) *clusterv1beta2.ManagedClusterSetBinding {
	return &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: set},
		Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: set}}
}

func exclusiveSet(name string) *clusterv1beta2.ManagedClusterSet {
	s := clusterset.DefaultSet()
	s.Name = name
	return s
}

// newInput schedules p over clusters, with the sets default, global, a and
// b existing and default bound to p's namespace.
func newInput(p *clusterv1beta1.Placement, clusters ...*clusterv1.ManagedCluster) Input {
	return Input{
		Placement:   p,
		Bindings:    []*clusterv1beta2.ManagedClusterSetBinding{binding(p.Namespace, clusterv1beta2.DefaultManagedClusterSetName)},
		ClusterSets: []*clusterv1beta2.ManagedClusterSet{clusterset.DefaultSet(), clusterset.GlobalSet(), exclusiveSet("a"), exclusiveSet("b")},
		Clusters:    clusters,
		Now:         now,
	}
}

func score(cluster, name string, validUntil *time.Time, kv ...any) *clusterv1alpha1.AddOnPlacementScore {
	s := &clusterv1alpha1.AddOnPlacementScore{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name}}
	if validUntil != nil {
		s.Status.ValidUntil = &metav1.Time{Time: *validUntil}
	}
	for i := 0; i < len(kv); i += 2 {
		s.Status.Scores = append(s.Status.Scores, clusterv1alpha1.AddOnPlacementScoreItem{Name: kv[i].(string), Value: int32(kv[i+1].(int))})
	}
	return s
}

// names are the names of the chosen clusters, sorted.
func names(r Result) []string {
	var out []string
	for _, d := range r.Decisions {
		out = append(out, d.ClusterName)
	}
	slices.Sort(out)
	return out
}

// previous turns a result into the Previous of the next scheduling.
func previous(r Result) sets.Set[string] {
	m := sets.New[string]()
	for _, d := range r.Decisions {
		m.Insert(d.ClusterName)
	}
	return m
}

func condition(r Result, t string) metav1.Condition {
	for _, c := range r.Conditions {
		if c.Type == t {
			return c
		}
	}
	return metav1.Condition{}
}
