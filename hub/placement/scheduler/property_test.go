package scheduler

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
)

// world is a random hub: clusters, and a placement over them.
type world struct {
	in Input
	// oracle says, independently of the scheduler, whether a cluster
	// qualifies given whether it is chosen already.
	oracle func(c *clusterv1.ManagedCluster, chosen bool) bool
}

var (
	envs       = []string{"prod", "dev", "staging"}
	taintKeys  = []string{"gpu", "spot", "maintenance"}
	effects    = []clusterv1.TaintEffect{clusterv1.TaintEffectNoSelect, clusterv1.TaintEffectPreferNoSelect, clusterv1.TaintEffectNoSelectIfNew}
	setNames   = []string{"default", "a", "b"}
	prioritzrs = []string{"Balance", "Steady", "ResourceAllocatableCPU", "ResourceAllocatableMemory"}
)

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func randomCluster(r *rand.Rand, name string) *clusterv1.ManagedCluster {
	c := newCluster(name, inSet(pick(r, setNames)), labelled("env", pick(r, envs)),
		allocatable(fmt.Sprint(1+r.IntN(64)), fmt.Sprintf("%dGi", 1+r.IntN(256))))
	for range r.IntN(3) {
		c.Spec.Taints = append(c.Spec.Taints, clusterv1.Taint{Key: pick(r, taintKeys), Effect: pick(r, effects), TimeAdded: metav1.NewTime(now.Add(-time.Hour))})
	}
	return c
}

func randomWorld(r *rand.Rand) world {
	var clusters []*clusterv1.ManagedCluster
	for i := range r.IntN(60) {
		clusters = append(clusters, randomCluster(r, fmt.Sprintf("c%02d", i)))
	}
	p := newPlacement()
	if r.IntN(4) > 0 {
		p.Spec.NumberOfClusters = ptr.To(int32(r.IntN(20)))
	}
	wantEnvs := map[string]bool{}
	for range r.IntN(3) {
		env := pick(r, envs)
		wantEnvs[env] = true
		requireLabels("env", env)(p)
	}
	tolerated := map[string]bool{}
	for _, k := range taintKeys {
		if r.IntN(2) == 0 {
			tolerated[k] = true
			p.Spec.Tolerations = append(p.Spec.Tolerations, clusterv1beta1.Toleration{Key: k, Operator: clusterv1beta1.TolerationOpExists})
		}
	}
	if r.IntN(2) == 0 {
		p.Spec.PrioritizerPolicy.Mode = clusterv1beta1.PrioritizerPolicyModeExact
	}
	for range r.IntN(4) {
		p.Spec.PrioritizerPolicy.Configurations = append(p.Spec.PrioritizerPolicy.Configurations, builtIn(pick(r, prioritzrs), int32(r.IntN(21)-10)))
	}
	bound := map[string]bool{}
	in := newInput(p, clusters...)
	in.Bindings = nil
	for _, s := range setNames {
		if r.IntN(3) > 0 {
			bound[s] = true
			in.Bindings = append(in.Bindings, binding("ns", s))
		}
	}
	in.DecisionCounts = map[string]int{}
	for _, c := range clusters {
		in.DecisionCounts[c.Name] = r.IntN(5)
	}
	oracle := func(c *clusterv1.ManagedCluster, chosen bool) bool {
		if !bound[c.Labels[clusterv1beta2.ClusterSetLabel]] {
			return false
		}
		if len(wantEnvs) > 0 && !wantEnvs[c.Labels["env"]] {
			return false
		}
		for _, t := range c.Spec.Taints {
			if tolerated[t.Key] {
				continue
			}
			if t.Effect == clusterv1.TaintEffectNoSelect || (t.Effect == clusterv1.TaintEffectNoSelectIfNew && !chosen) {
				return false
			}
		}
		return true
	}
	return world{in: in, oracle: oracle}
}

// checkResult asserts what every result must satisfy.
func checkResult(t *testing.T, w world, r Result) {
	t.Helper()
	if r.Misconfigured != nil {
		t.Fatalf("misconfigured: %v", r.Misconfigured)
	}
	chosen := map[string]bool{}
	for _, d := range r.Decisions {
		if chosen[d.ClusterName] {
			t.Fatalf("%s chosen twice", d.ClusterName)
		}
		chosen[d.ClusterName] = true
	}
	qualifying := 0
	for _, c := range w.in.Clusters {
		_, wasChosen := w.in.Previous[c.Name]
		ok := w.oracle(c, wasChosen)
		if ok {
			qualifying++
		}
		if chosen[c.Name] && !ok {
			t.Errorf("%s chosen but does not qualify", c.Name)
		}
	}
	want := qualifying
	if n := w.in.Placement.Spec.NumberOfClusters; n != nil {
		want = min(int(*n), qualifying)
	}
	if len(r.Decisions) != want {
		t.Errorf("chose %d clusters, want %d (of %d qualifying)", len(r.Decisions), want, qualifying)
	}
	total := 0
	for i, s := range r.PlacementDecisions {
		if s.Name != DecisionName("p", i+1) || len(s.Decisions) > clusterv1beta1.MaxDecisionsPerPlacementDecision || s.Decisions == nil {
			t.Errorf("placement decision %d: %s with %d decisions", i, s.Name, len(s.Decisions))
		}
		total += len(s.Decisions)
	}
	groups := 0
	for _, g := range r.DecisionGroups {
		groups += int(g.ClustersCount)
	}
	if total != len(r.Decisions) || groups != total {
		t.Errorf("%d decisions, %d in PlacementDecisions, %d in groups", len(r.Decisions), total, groups)
	}
	n := w.in.Placement.Spec.NumberOfClusters
	wantSatisfied := qualifying > 0 && (n == nil || int(*n) <= qualifying)
	if satisfied := condition(r, clusterv1beta1.PlacementConditionSatisfied); (satisfied.Status == metav1.ConditionTrue) != wantSatisfied {
		t.Errorf("PlacementSatisfied %s (%s) with %d of %d qualifying chosen", satisfied.Status, satisfied.Message, len(r.Decisions), qualifying)
	}
}

func TestScheduleProperties(t *testing.T) {
	for seed := range uint64(400) {
		r := rand.New(rand.NewPCG(seed, 42))
		w := randomWorld(r)
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			first := Schedule(w.in)
			checkResult(t, w, first)

			// The same input gives the same result, whatever the order of the clusters.
			shuffled := w.in
			shuffled.Clusters = slices.Clone(w.in.Clusters)
			r.Shuffle(len(shuffled.Clusters), func(i, j int) {
				shuffled.Clusters[i], shuffled.Clusters[j] = shuffled.Clusters[j], shuffled.Clusters[i]
			})
			if again := Schedule(shuffled); !reflect.DeepEqual(again.Decisions, first.Decisions) {
				t.Fatalf("shuffling the clusters changed the decisions:\n%v\n%v", first.Decisions, again.Decisions)
			}

			// Scheduling again with nothing changed changes nothing.
			next := w.in
			next.Previous = previous(first)
			p := w.in.Placement.DeepCopy()
			p.Status.LastScoreUpdateTime = first.LastScoreUpdateTime
			next.Placement = p
			second := Schedule(next)
			checkResult(t, world{in: next, oracle: w.oracle}, second)
			if !reflect.DeepEqual(names(second), names(first)) {
				t.Fatalf("rescheduling with nothing changed moved decisions: %v, then %v", names(first), names(second))
			}

			// With Steady on, a newly qualifying cluster displaces none.
			pl, _ := compile(p)
			if pl.steady {
				third := next
				third.Clusters = append(slices.Clone(next.Clusters), newCluster("zz-newcomer", allocatable("1000", "1Ti")))
				r3 := Schedule(third)
				for _, name := range names(second) {
					if !slices.Contains(names(r3), name) {
						t.Fatalf("a new cluster displaced %s: %v, then %v", name, names(second), names(r3))
					}
				}
			}
		})
	}
}
