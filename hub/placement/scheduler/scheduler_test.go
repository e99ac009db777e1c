package scheduler

import (
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
)

func TestClusterSets(t *testing.T) {
	clusters := []*clusterv1.ManagedCluster{newCluster("d1"), newCluster("a1", inSet("a")), newCluster("b1", inSet("b")),
		newCluster("gone", inSet("a"), func(c *clusterv1.ManagedCluster) { c.DeletionTimestamp = &metav1.Time{Time: now} })}
	tests := []struct {
		name       string
		bindings   []*clusterv1beta2.ManagedClusterSetBinding
		sets       []string
		want       []string
		wantReason string
		wantMsg    string
	}{
		{name: "no binding", wantReason: clusterv1beta1.ReasonNoManagedClusterSetBindings, wantMsg: "flotilla clusterset bind default --namespace ns"},
		{name: "binding in another namespace", bindings: []*clusterv1beta2.ManagedClusterSetBinding{binding("other", "a")},
			wantReason: clusterv1beta1.ReasonNoManagedClusterSetBindings},
		{name: "binding to a set that does not exist", bindings: []*clusterv1beta2.ManagedClusterSetBinding{binding("ns", "nope")},
			wantReason: clusterv1beta1.ReasonNoManagedClusterSetBindings},
		{name: "binding not named after its set", bindings: []*clusterv1beta2.ManagedClusterSetBinding{func() *clusterv1beta2.ManagedClusterSetBinding {
			b := binding("ns", "a")
			b.Name = "alias"
			return b
		}()}, wantReason: clusterv1beta1.ReasonNoManagedClusterSetBindings},
		{name: "one bound set; deleted clusters do not count", bindings: []*clusterv1beta2.ManagedClusterSetBinding{binding("ns", "a")},
			want: []string{"a1"}, wantReason: clusterv1beta1.ReasonAllDecisionsScheduled},
		{name: "two bound sets", bindings: []*clusterv1beta2.ManagedClusterSetBinding{binding("ns", "a"), binding("ns", "b")},
			want: []string{"a1", "b1"}, wantReason: clusterv1beta1.ReasonAllDecisionsScheduled},
		{name: "spec.clusterSets narrows", bindings: []*clusterv1beta2.ManagedClusterSetBinding{binding("ns", "a"), binding("ns", "b")}, sets: []string{"b", "c"},
			want: []string{"b1"}, wantReason: clusterv1beta1.ReasonAllDecisionsScheduled},
		{name: "spec.clusterSets names no bound set", bindings: []*clusterv1beta2.ManagedClusterSetBinding{binding("ns", "a")}, sets: []string{"b"},
			wantReason: clusterv1beta1.ReasonNoIntersection, wantMsg: "None of the ManagedClusterSets [b] in spec.clusterSets is bound to namespace ns (bound: [a])"},
		{name: "global holds every cluster", bindings: []*clusterv1beta2.ManagedClusterSetBinding{binding("ns", "global")},
			want: []string{"a1", "b1", "d1"}, wantReason: clusterv1beta1.ReasonAllDecisionsScheduled},
		{name: "empty set", bindings: []*clusterv1beta2.ManagedClusterSetBinding{binding("ns", "empty")},
			wantReason: clusterv1beta1.ReasonAllManagedClusterSetsEmpty},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := newInput(newPlacement(useSets(tt.sets...)), clusters...)
			in.ClusterSets = append(in.ClusterSets, exclusiveSet("empty"))
			in.Bindings = tt.bindings
			r := Schedule(in)
			if got := names(r); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("chose %v, want %v", got, tt.want)
			}
			c := condition(r, clusterv1beta1.PlacementConditionSatisfied)
			if c.Reason != tt.wantReason || !strings.Contains(c.Message, tt.wantMsg) {
				t.Errorf("PlacementSatisfied %s %q, want reason %s and %q", c.Reason, c.Message, tt.wantReason, tt.wantMsg)
			}
		})
	}
}

func TestSatisfiedMessageSaysWhy(t *testing.T) {
	clusters := []*clusterv1.ManagedCluster{
		newCluster("ok", labelled("env", "prod")),
		newCluster("dev", labelled("env", "dev")),
		newCluster("down", labelled("env", "prod"), tainted(clusterv1.ManagedClusterTaintUnreachable, "", clusterv1.TaintEffectNoSelect, now)),
		newCluster("down2", labelled("env", "prod"), tainted(clusterv1.ManagedClusterTaintUnreachable, "", clusterv1.TaintEffectNoSelect, now)),
		newCluster("gpu", labelled("env", "prod"), tainted("gpu", "a100", clusterv1.TaintEffectNoSelect, now)),
	}
	r := Schedule(newInput(newPlacement(count(3), requireLabels("env", "prod")), clusters...))
	c := condition(r, clusterv1beta1.PlacementConditionSatisfied)
	want := "1 of 3 requested clusters selected: of the 5 clusters in ManagedClusterSets [default], 1 qualify; 1 match no predicate (predicate 1 rejects 1 by labelSelector); " +
		"3 have taints the placement does not tolerate (cluster.open-cluster-management.io/unreachable:NoSelect on 2, gpu=a100:NoSelect on 1)"
	if c.Status != metav1.ConditionFalse || c.Reason != clusterv1beta1.ReasonNotAllDecisionsScheduled || c.Message != want {
		t.Errorf("PlacementSatisfied %s %s %q, want False NotAllDecisionsScheduled %q", c.Status, c.Reason, c.Message, want)
	}
	if m := condition(r, clusterv1beta1.PlacementConditionMisconfigured); m.Status != metav1.ConditionFalse {
		t.Errorf("PlacementMisconfigured %s, want False", m.Status)
	}

	r = Schedule(newInput(newPlacement(requireLabels("env", "staging"), requireCEL(`managedCluster.metadata.labels["env"] == "dev"`, `managedCluster.metadata.name == "x"`)), clusters...))
	c = condition(r, clusterv1beta1.PlacementConditionSatisfied)
	want = "5 match no predicate (predicate 1 rejects 5 by labelSelector; predicate 2 rejects 5 by celSelector)"
	if c.Reason != clusterv1beta1.ReasonNoManagedClusterMatched || !strings.Contains(c.Message, want) {
		t.Errorf("PlacementSatisfied %s %q, want NoManagedClusterMatched saying %q", c.Reason, c.Message, want)
	}

	r = Schedule(newInput(newPlacement(count(1), requireLabels("env", "prod")), clusters...))
	if c := condition(r, clusterv1beta1.PlacementConditionSatisfied); c.Status != metav1.ConditionTrue || c.Message != "All 1 requested clusters selected" {
		t.Errorf("PlacementSatisfied %s %q, want True", c.Status, c.Message)
	}
}

func TestMisconfigured(t *testing.T) {
	r := Schedule(newInput(newPlacement(requireCEL(`managedCluster.nope(`)), newCluster("c1")))
	if r.Misconfigured == nil || len(r.PlacementDecisions) != 0 || len(r.Conditions) != 1 {
		t.Fatalf("result %+v, want only a misconfiguration", r)
	}
	c := r.Conditions[0]
	if c.Type != clusterv1beta1.PlacementConditionMisconfigured || c.Status != metav1.ConditionTrue || c.Reason != clusterv1beta1.ReasonMisconfigured ||
		!strings.Contains(c.Message, "spec.predicates[0].requiredClusterSelector.celSelector.celExpressions[0]") ||
		!strings.Contains(c.Message, "decisions stay as they were") {
		t.Errorf("condition %+v", c)
	}
}

func TestSteady(t *testing.T) {
	cpu := builtIn("ResourceAllocatableCPU", 5)
	small, big := newCluster("small", allocatable("1", "")), newCluster("big", allocatable("8", ""))
	huge := newCluster("huge", allocatable("64", ""))

	t.Run("a chosen cluster stays while it qualifies, even when a better one comes", func(t *testing.T) {
		p := newPlacement(count(1), prioritize(clusterv1beta1.PrioritizerPolicyModeAdditive, cpu))
		first := Schedule(newInput(p, small))
		in := newInput(p, small, huge)
		in.Previous = previous(first)
		if got := names(Schedule(in)); !reflect.DeepEqual(got, []string{"small"}) {
			t.Errorf("chose %v, want [small]", got)
		}
	})
	t.Run("a chosen cluster that stops qualifying is replaced", func(t *testing.T) {
		p := newPlacement(count(1), requireLabels("env", "prod"))
		in := newInput(p, newCluster("a", labelled("env", "dev")), newCluster("b", labelled("env", "prod")))
		in.Previous = sets.New("a")
		if got := names(Schedule(in)); !reflect.DeepEqual(got, []string{"b"}) {
			t.Errorf("chose %v, want [b]", got)
		}
	})
	t.Run("fewer clusters asked for: the best chosen ones stay", func(t *testing.T) {
		p := newPlacement(count(1), prioritize(clusterv1beta1.PrioritizerPolicyModeAdditive, cpu))
		in := newInput(p, small, big, huge)
		in.Previous = sets.New("small", "big")
		if got := names(Schedule(in)); !reflect.DeepEqual(got, []string{"big"}) {
			t.Errorf("chose %v, want [big]", got)
		}
	})
	t.Run("without Steady the best win, at most once per scoreRateLimit", func(t *testing.T) {
		p := newPlacement(count(1), prioritize(clusterv1beta1.PrioritizerPolicyModeExact, cpu), func(p *clusterv1beta1.Placement) {
			p.Spec.ScoreRateLimit = "5m"
			p.Status.LastScoreUpdateTime = &metav1.Time{Time: now.Add(-2 * time.Minute)}
		})
		in := newInput(p, small, huge)
		in.Previous = sets.New("small")
		r := Schedule(in)
		if got := names(r); !reflect.DeepEqual(got, []string{"small"}) || r.RequeueAfter != 3*time.Minute {
			t.Errorf("chose %v, requeue %v; want [small] kept, requeue in 3m", got, r.RequeueAfter)
		}
		in.Now = now.Add(3 * time.Minute)
		r = Schedule(in)
		if got := names(r); !reflect.DeepEqual(got, []string{"huge"}) || !r.LastScoreUpdateTime.Time.Equal(in.Now) {
			t.Errorf("chose %v, last score update %v; want [huge] at %v", got, r.LastScoreUpdateTime, in.Now)
		}
	})
	t.Run("a needed change is not held back by scoreRateLimit", func(t *testing.T) {
		p := newPlacement(count(2), prioritize(clusterv1beta1.PrioritizerPolicyModeExact, cpu), func(p *clusterv1beta1.Placement) {
			p.Status.LastScoreUpdateTime = &metav1.Time{Time: now}
		})
		in := newInput(p, small, big)
		in.Previous = sets.New("small")
		if r := Schedule(in); !reflect.DeepEqual(names(r), []string{"big", "small"}) || r.RequeueAfter != 0 {
			t.Errorf("chose %v, requeue %v; want [big small] at once", names(r), r.RequeueAfter)
		}
	})
	t.Run("NoSelectIfNew keeps a chosen cluster and keeps new ones out", func(t *testing.T) {
		draining := tainted("maintenance", "", clusterv1.TaintEffectNoSelectIfNew, now)
		in := newInput(newPlacement(), newCluster("old", draining), newCluster("new", draining), newCluster("clean"))
		in.Previous = sets.New("old")
		if got := names(Schedule(in)); !reflect.DeepEqual(got, []string{"clean", "old"}) {
			t.Errorf("chose %v, want [clean old]", got)
		}
	})
}

func TestPreferNoSelect(t *testing.T) {
	soft := tainted("spot", "", clusterv1.TaintEffectPreferNoSelect, now)
	clusters := []*clusterv1.ManagedCluster{newCluster("a", soft, allocatable("64", "")), newCluster("b", allocatable("1", "")), newCluster("c", soft)}
	p := newPlacement(count(2), prioritize(clusterv1beta1.PrioritizerPolicyModeAdditive, builtIn("ResourceAllocatableCPU", 10)))
	if got := names(Schedule(newInput(p, clusters...))); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("chose %v, want b first, then the best tainted one a", got)
	}
	p = newPlacement(count(2), tolerate(clusterv1beta1.Toleration{Key: "spot", Operator: clusterv1beta1.TolerationOpExists}))
	if r := Schedule(newInput(p, clusters...)); !reflect.DeepEqual(names(r), []string{"a", "b"}) {
		t.Errorf("tolerated: chose %v, want by name [a b]", names(r))
	}
}

func TestRequeue(t *testing.T) {
	t.Run("when a toleration runs out", func(t *testing.T) {
		p := newPlacement(tolerate(clusterv1beta1.Toleration{Key: clusterv1.ManagedClusterTaintUnreachable, Operator: clusterv1beta1.TolerationOpExists,
			TolerationSeconds: ptr.To[int64](300)}))
		c := newCluster("c1", tainted(clusterv1.ManagedClusterTaintUnreachable, "", clusterv1.TaintEffectNoSelect, now.Add(-time.Minute)))
		in := newInput(p, c)
		r := Schedule(in)
		if !reflect.DeepEqual(names(r), []string{"c1"}) || r.RequeueAfter != 4*time.Minute {
			t.Errorf("chose %v, requeue %v; want [c1], requeue in 4m", names(r), r.RequeueAfter)
		}
		in.Now = now.Add(4 * time.Minute)
		in.Previous = previous(r)
		if r := Schedule(in); len(r.Decisions) != 0 || r.RequeueAfter != 0 {
			t.Errorf("after expiry chose %v, requeue %v; want none", names(r), r.RequeueAfter)
		}
	})
	t.Run("when a score used runs out", func(t *testing.T) {
		until := now.Add(90 * time.Second)
		in := newInput(newPlacement(prioritize("", addOn("usage", "cpu", 1))), newCluster("c1"))
		in.Scores = map[string]map[string]*clusterv1alpha1.AddOnPlacementScore{"c1": {"usage": score("c1", "usage", &until, "cpu", 10)}}
		if r := Schedule(in); r.RequeueAfter != 90*time.Second {
			t.Errorf("requeue %v, want 90s", r.RequeueAfter)
		}
	})
	t.Run("never when nothing expires", func(t *testing.T) {
		if r := Schedule(newInput(newPlacement(), newCluster("c1"))); r.RequeueAfter != 0 {
			t.Errorf("requeue %v, want none", r.RequeueAfter)
		}
	})
}

func TestRequirementsOf(t *testing.T) {
	tests := []struct {
		name string
		p    *clusterv1beta1.Placement
		want Requirements
	}{
		{"defaults use Balance", newPlacement(), Requirements{DecisionCounts: true}},
		{"Exact without Balance", newPlacement(prioritize(clusterv1beta1.PrioritizerPolicyModeExact, builtIn("Steady", 1))), Requirements{}},
		{"AddOn prioritizer", newPlacement(prioritize(clusterv1beta1.PrioritizerPolicyModeExact, addOn("a", "b", 1))), Requirements{Scores: true}},
		{"CEL scores()", newPlacement(prioritize(clusterv1beta1.PrioritizerPolicyModeExact), requireCEL(`managedCluster.scores("a").size() > 0`)), Requirements{Scores: true}},
	}
	for _, tt := range tests {
		if got := RequirementsOf(tt.p); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
