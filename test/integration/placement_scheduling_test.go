package integration

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
)

var _ = Describe("Placement: cluster sets and bindings", func() {
	It("selects only from the sets bound to its namespace, narrowed by spec.clusterSets", func(ctx SpecContext) {
		setA, ns := newSetWithNamespace(ctx, "pl-sets")
		setB := newClusterName("pl-sets")
		createSet(ctx, setB, nil)
		unbound := newClusterName("pl-sets")
		createSet(ctx, unbound, nil)
		a1, b1, u1 := newClusterName("pl-a"), newClusterName("pl-b"), newClusterName("pl-u")
		createMember(ctx, a1, setA, member{})
		createMember(ctx, b1, setB, member{})
		createMember(ctx, u1, unbound, member{})

		By("choosing the members of the one bound set")
		createPlacement(ctx, ns, "all", clusterv1beta1.PlacementSpec{})
		Eventually(chosen(ctx, ns, "all")).Should(Equal([]string{a1}))
		Eventually(placementCondition(ctx, ns, "all", clusterv1beta1.PlacementConditionSatisfied)).
			Should(haveCondition(metav1.ConditionTrue, clusterv1beta1.ReasonAllDecisionsScheduled))

		By("adding the members of a set when it is bound too")
		bindSet(ctx, ns, setB)
		Eventually(chosen(ctx, ns, "all")).Should(ConsistOf(a1, b1))

		By("narrowing to spec.clusterSets")
		createPlacement(ctx, ns, "only-b", clusterv1beta1.PlacementSpec{ClusterSets: []string{setB, unbound}})
		Eventually(chosen(ctx, ns, "only-b")).Should(Equal([]string{b1}))

		By("saying so when spec.clusterSets names no bound set")
		createPlacement(ctx, ns, "only-unbound", clusterv1beta1.PlacementSpec{ClusterSets: []string{unbound}})
		Eventually(placementCondition(ctx, ns, "only-unbound", clusterv1beta1.PlacementConditionSatisfied)).
			Should(And(haveCondition(metav1.ConditionFalse, clusterv1beta1.ReasonNoIntersection), HaveField("Message", ContainSubstring(unbound))))
		Expect(chosen(ctx, ns, "only-unbound")()).To(BeEmpty())

		By("dropping the members of a set whose binding is deleted")
		Expect(hubCP.Client.Delete(ctx, &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: setA}})).To(Succeed())
		Eventually(chosen(ctx, ns, "all")).Should(Equal([]string{b1}))

		By("following a cluster that moves between sets")
		Expect(updateCluster(ctx, hubCP.Client, a1, func(mc *clusterv1.ManagedCluster) { mc.Labels[clusterv1beta2.ClusterSetLabel] = setB })).To(Succeed())
		Eventually(chosen(ctx, ns, "all")).Should(ConsistOf(a1, b1))
	})

	It("reports a namespace without bindings, and an empty set", func(ctx SpecContext) {
		ns := newNamespace(ctx, "pl-nobind")
		createPlacement(ctx, ns, "p", clusterv1beta1.PlacementSpec{})
		Eventually(placementCondition(ctx, ns, "p", clusterv1beta1.PlacementConditionSatisfied)).
			Should(And(haveCondition(metav1.ConditionFalse, clusterv1beta1.ReasonNoManagedClusterSetBindings),
				HaveField("Message", ContainSubstring("flotilla clusterset bind"))))
		By("keeping one empty PlacementDecision, as OCM does")
		Eventually(func() []clusterv1beta1.PlacementDecision { return placementDecisions(ctx, ns, "p") }).Should(ConsistOf(
			And(HaveField("Name", "p-decision-1"), HaveField("Status.Decisions", BeEmpty()))))

		set := newClusterName("pl-empty")
		createSet(ctx, set, nil)
		bindSet(ctx, ns, set)
		Eventually(placementCondition(ctx, ns, "p", clusterv1beta1.PlacementConditionSatisfied)).
			Should(haveCondition(metav1.ConditionFalse, clusterv1beta1.ReasonAllManagedClusterSetsEmpty))

		By("scheduling as soon as a cluster joins the set")
		c := newClusterName("pl-joiner")
		createMember(ctx, c, set, member{})
		Eventually(chosen(ctx, ns, "p")).Should(Equal([]string{c}))
	})
})

var _ = Describe("Placement: predicates, count and stability", func() {
	It("selects by labels, claims and CEL, caps the count, keeps its choice and says why it is short", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "pl-pred")
		prod1, prod2, dev := newClusterName("pl-prod"), newClusterName("pl-prod"), newClusterName("pl-dev")
		createMember(ctx, prod1, set, member{labels: map[string]string{"env": "prod"}, claims: map[string]string{"region.open-cluster-management.io": "eu"}})
		createMember(ctx, prod2, set, member{labels: map[string]string{"env": "prod"}, claims: map[string]string{"region.open-cluster-management.io": "us"}})
		createMember(ctx, dev, set, member{labels: map[string]string{"env": "dev"}})

		By("ORing a label predicate and a claim predicate")
		createPlacement(ctx, ns, "ored", clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{
			{RequiredClusterSelector: clusterv1beta1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}}}},
			{RequiredClusterSelector: clusterv1beta1.ClusterSelector{ClaimSelector: clusterv1beta1.ClusterClaimSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "region.open-cluster-management.io", Operator: metav1.LabelSelectorOpIn, Values: []string{"eu"}}}}}},
		}})
		Eventually(chosen(ctx, ns, "ored")).Should(ConsistOf(prod1, dev))

		By("selecting with CEL")
		createPlacement(ctx, ns, "cel", clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{
			{RequiredClusterSelector: clusterv1beta1.ClusterSelector{CelSelector: clusterv1beta1.ClusterCelSelector{CelExpressions: []string{
				`managedCluster.metadata.labels["env"] == "prod"`,
				`managedCluster.status.clusterClaims.exists(c, c.name == "region.open-cluster-management.io" && c.value == "us")`,
			}}}},
		}})
		Eventually(chosen(ctx, ns, "cel")).Should(Equal([]string{prod2}))

		By("asking for more clusters than qualify")
		createPlacement(ctx, ns, "three-prod", clusterv1beta1.PlacementSpec{NumberOfClusters: ptr.To[int32](3),
			Predicates: []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
				LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}}}})
		Eventually(chosen(ctx, ns, "three-prod")).Should(ConsistOf(prod1, prod2))
		Eventually(placementCondition(ctx, ns, "three-prod", clusterv1beta1.PlacementConditionSatisfied)).Should(And(
			haveCondition(metav1.ConditionFalse, clusterv1beta1.ReasonNotAllDecisionsScheduled),
			HaveField("Message", Equal("2 of 3 requested clusters selected: of the 3 clusters in ManagedClusterSets ["+set+"], 2 qualify; 1 match no predicate (predicate 1 rejects 1 by labelSelector)"))))
		Expect(getPlacement(ctx, ns, "three-prod").Status.NumberOfSelectedClusters).To(BeEquivalentTo(2))

		By("keeping a chosen cluster when a better one qualifies")
		createPlacement(ctx, ns, "one", clusterv1beta1.PlacementSpec{NumberOfClusters: ptr.To[int32](1),
			PrioritizerPolicy: clusterv1beta1.PrioritizerPolicy{Configurations: []clusterv1beta1.PrioritizerConfig{
				{ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{Type: clusterv1beta1.ScoreCoordinateTypeBuiltIn, BuiltIn: clusterv1beta1.PrioritizerResourceAllocatableCPU}, Weight: ptr.To[int32](5)}}}})
		var first []string
		Eventually(func() []string { first = chosen(ctx, ns, "one")(); return first }).Should(HaveLen(1))
		big := newClusterName("pl-big")
		createMember(ctx, big, set, member{cpu: "256"})
		Consistently(chosen(ctx, ns, "one"), 3*time.Second).Should(Equal(first))

		By("replacing a chosen cluster that stops qualifying, and removing it from a placement when it stops matching")
		Expect(updateCluster(ctx, hubCP.Client, first[0], func(mc *clusterv1.ManagedCluster) {
			mc.Spec.Taints = append(mc.Spec.Taints, clusterv1.Taint{Key: "retired", Effect: clusterv1.TaintEffectNoSelect, TimeAdded: metav1.Now()})
		})).To(Succeed())
		Eventually(chosen(ctx, ns, "one")).Should(Equal([]string{big}))
		Expect(updateCluster(ctx, hubCP.Client, prod1, func(mc *clusterv1.ManagedCluster) { mc.Labels["env"] = "retired" })).To(Succeed())
		Eventually(chosen(ctx, ns, "three-prod")).Should(ConsistOf(prod2))
	})

	It("marks an unusable spec Misconfigured and keeps its decisions until it is fixed", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "pl-misc")
		c := newClusterName("pl-misc")
		createMember(ctx, c, set, member{})
		createPlacement(ctx, ns, "p", clusterv1beta1.PlacementSpec{})
		Eventually(chosen(ctx, ns, "p")).Should(Equal([]string{c}))

		By("breaking the CEL and naming an unknown prioritizer")
		updatePlacement(ctx, ns, "p", func(s *clusterv1beta1.PlacementSpec) {
			s.Predicates = []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
				CelSelector: clusterv1beta1.ClusterCelSelector{CelExpressions: []string{`managedCluster.metadata.name ==`}}}}}
			s.PrioritizerPolicy.Configurations = []clusterv1beta1.PrioritizerConfig{{ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{
				Type: clusterv1beta1.ScoreCoordinateTypeBuiltIn, BuiltIn: "Fastest"}}}
		})
		Eventually(placementCondition(ctx, ns, "p", clusterv1beta1.PlacementConditionMisconfigured)).Should(And(
			haveCondition(metav1.ConditionTrue, clusterv1beta1.ReasonMisconfigured),
			HaveField("Message", And(ContainSubstring("spec.predicates[0].requiredClusterSelector.celSelector.celExpressions[0]: does not compile"),
				ContainSubstring(`unknown prioritizer "Fastest"`)))))
		Consistently(chosen(ctx, ns, "p"), 2*time.Second).Should(Equal([]string{c}))

		By("fixing it")
		updatePlacement(ctx, ns, "p", func(s *clusterv1beta1.PlacementSpec) {
			s.Predicates[0].RequiredClusterSelector.CelSelector.CelExpressions = []string{`managedCluster.metadata.name == "none"`}
			s.PrioritizerPolicy.Configurations = nil
		})
		Eventually(placementCondition(ctx, ns, "p", clusterv1beta1.PlacementConditionMisconfigured)).
			Should(haveCondition(metav1.ConditionFalse, clusterv1beta1.ReasonSucceedconfigured))
		Eventually(chosen(ctx, ns, "p")).Should(BeEmpty())
		Expect(placementCondition(ctx, ns, "p", clusterv1beta1.PlacementConditionSatisfied)()).
			To(haveCondition(metav1.ConditionFalse, clusterv1beta1.ReasonNoManagedClusterMatched))
	})
})

var _ = Describe("Placement: taints and tolerations", func() {
	It("excludes NoSelect, prefers untainted over PreferNoSelect, keeps NoSelectIfNew only when chosen, and stops tolerating at tolerationSeconds", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "pl-taint")
		now := metav1.Now()
		clean, soft, hard, fresh := newClusterName("pl-clean"), newClusterName("pl-soft"), newClusterName("pl-hard"), newClusterName("pl-fresh")
		createMember(ctx, clean, set, member{})
		createMember(ctx, soft, set, member{taints: []clusterv1.Taint{{Key: "spot", Effect: clusterv1.TaintEffectPreferNoSelect, TimeAdded: now}}})
		createMember(ctx, hard, set, member{taints: []clusterv1.Taint{{Key: "gpu", Value: "a100", Effect: clusterv1.TaintEffectNoSelect, TimeAdded: now}}})

		By("leaving out the NoSelect cluster and saying which taint did")
		createPlacement(ctx, ns, "any", clusterv1beta1.PlacementSpec{})
		Eventually(chosen(ctx, ns, "any")).Should(ConsistOf(clean, soft))
		createPlacement(ctx, ns, "three", clusterv1beta1.PlacementSpec{NumberOfClusters: ptr.To[int32](3)})
		Eventually(placementCondition(ctx, ns, "three", clusterv1beta1.PlacementConditionSatisfied)).
			Should(HaveField("Message", ContainSubstring("1 have taints the placement does not tolerate (gpu=a100:NoSelect on 1)")))

		By("taking the untainted cluster before the PreferNoSelect one")
		createPlacement(ctx, ns, "one", clusterv1beta1.PlacementSpec{NumberOfClusters: ptr.To[int32](1)})
		Eventually(chosen(ctx, ns, "one")).Should(Equal([]string{clean}))

		By("keeping a chosen cluster that gets a NoSelectIfNew taint, but not taking a new one that has it")
		Expect(updateCluster(ctx, hubCP.Client, clean, func(mc *clusterv1.ManagedCluster) {
			mc.Spec.Taints = append(mc.Spec.Taints, clusterv1.Taint{Key: "draining", Effect: clusterv1.TaintEffectNoSelectIfNew, TimeAdded: metav1.Now()})
		})).To(Succeed())
		createMember(ctx, fresh, set, member{taints: []clusterv1.Taint{{Key: "draining", Effect: clusterv1.TaintEffectNoSelectIfNew, TimeAdded: now}}})
		Consistently(chosen(ctx, ns, "any"), 2*time.Second).Should(ConsistOf(clean, soft))

		By("tolerating a taint for tolerationSeconds after it was added, then dropping the cluster without any other change")
		// The taint's timeAdded has whole seconds: the toleration ends 6 to 7 seconds from now.
		seconds := int64(time.Since(now.Time).Seconds()) + 6
		createPlacement(ctx, ns, "tolerant", clusterv1beta1.PlacementSpec{
			Tolerations: []clusterv1beta1.Toleration{{Key: "gpu", Operator: clusterv1beta1.TolerationOpExists, TolerationSeconds: ptr.To(seconds)}},
			Predicates: []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{CelSelector: clusterv1beta1.ClusterCelSelector{
				CelExpressions: []string{fmt.Sprintf(`managedCluster.metadata.name == %q`, hard)}}}}}})
		Eventually(chosen(ctx, ns, "tolerant"), 5*time.Second).Should(Equal([]string{hard}))
		Eventually(chosen(ctx, ns, "tolerant"), 20*time.Second).Should(BeEmpty())
	})
})

var _ = Describe("Placement: prioritizers", func() {
	It("prefers more allocatable CPU, and the best AddOnPlacementScore, following score changes", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "pl-prio")
		small, large := newClusterName("pl-small"), newClusterName("pl-large")
		createMember(ctx, small, set, member{cpu: "2", memory: "64Gi"})
		createMember(ctx, large, set, member{cpu: "32", memory: "8Gi"})
		prioritizer := func(name string, weight int32) clusterv1beta1.PrioritizerConfig {
			return clusterv1beta1.PrioritizerConfig{ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{Type: clusterv1beta1.ScoreCoordinateTypeBuiltIn, BuiltIn: name}, Weight: ptr.To(weight)}
		}
		// Without Steady, and with a short scoreRateLimit, the choice follows
		// the scores even if the hub saw a cluster before its allocatable.
		createPlacement(ctx, ns, "cpu", clusterv1beta1.PlacementSpec{NumberOfClusters: ptr.To[int32](1), ScoreRateLimit: "1s",
			PrioritizerPolicy: clusterv1beta1.PrioritizerPolicy{Mode: clusterv1beta1.PrioritizerPolicyModeExact,
				Configurations: []clusterv1beta1.PrioritizerConfig{prioritizer(clusterv1beta1.PrioritizerResourceAllocatableCPU, 3)}}})
		createPlacement(ctx, ns, "memory", clusterv1beta1.PlacementSpec{NumberOfClusters: ptr.To[int32](1), ScoreRateLimit: "1s",
			PrioritizerPolicy: clusterv1beta1.PrioritizerPolicy{Mode: clusterv1beta1.PrioritizerPolicyModeExact,
				Configurations: []clusterv1beta1.PrioritizerConfig{prioritizer(clusterv1beta1.PrioritizerResourceAllocatableMemory, 1)}}})
		Eventually(chosen(ctx, ns, "cpu")).Should(Equal([]string{large}))
		Eventually(chosen(ctx, ns, "memory")).Should(Equal([]string{small}))

		By("scoring by an AddOnPlacementScore, so that a better score moves the choice")
		for cluster, value := range map[string]int32{small: 10, large: 90} {
			setScore(ctx, cluster, "usage", value)
		}
		createPlacement(ctx, ns, "addon", clusterv1beta1.PlacementSpec{NumberOfClusters: ptr.To[int32](1), ScoreRateLimit: "1s",
			PrioritizerPolicy: clusterv1beta1.PrioritizerPolicy{Mode: clusterv1beta1.PrioritizerPolicyModeExact,
				Configurations: []clusterv1beta1.PrioritizerConfig{{ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{
					Type: clusterv1beta1.ScoreCoordinateTypeAddOn, AddOn: &clusterv1beta1.AddOnScore{ResourceName: "usage", ScoreName: "cpuFree"}}, Weight: ptr.To[int32](1)}}}})
		Eventually(chosen(ctx, ns, "addon")).Should(Equal([]string{large}))
		setScore(ctx, small, "usage", 100)
		Eventually(chosen(ctx, ns, "addon")).Should(Equal([]string{small}))
	})
})

// setScore creates or updates the AddOnPlacementScore name of cluster with
// one score, cpuFree, in the cluster's namespace (created when missing).
func setScore(ctx SpecContext, cluster, name string, value int32) {
	GinkgoHelper()
	ensureNamespace(ctx, cluster)
	s := &clusterv1alpha1.AddOnPlacementScore{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name}}
	if err := hubCP.Client.Get(ctx, client.ObjectKeyFromObject(s), s); err != nil {
		Expect(client.IgnoreNotFound(err)).To(Succeed())
		Expect(hubCP.Client.Create(ctx, s)).To(Succeed())
	}
	s.Status.Scores = []clusterv1alpha1.AddOnPlacementScoreItem{{Name: "cpuFree", Value: value}}
	Expect(hubCP.Client.Status().Update(ctx, s)).To(Succeed())
}

var _ = Describe("Placement: decision groups and PlacementDecisions", func() {
	It("groups decisions, labels each PlacementDecision, holds at most 100 decisions in each, and goes with the placement", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "pl-groups")
		var canaries []string
		for i := range 4 {
			c := newClusterName("pl-grp")
			labels := map[string]string{}
			if i == 0 {
				labels["canary"] = "true"
				canaries = append(canaries, c)
			}
			createMember(ctx, c, set, member{labels: labels})
		}
		createPlacement(ctx, ns, "rollout", clusterv1beta1.PlacementSpec{DecisionStrategy: clusterv1beta1.DecisionStrategy{GroupStrategy: clusterv1beta1.GroupStrategy{
			DecisionGroups: []clusterv1beta1.DecisionGroup{{GroupName: "canary", ClusterSelector: clusterv1beta1.GroupClusterSelector{
				LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"canary": "true"}}}}},
			ClustersPerDecisionGroup: intstr.FromInt32(2),
		}}})
		Eventually(func() []clusterv1beta1.DecisionGroupStatus {
			return getPlacement(ctx, ns, "rollout").Status.DecisionGroups
		}).Should(Equal(
			[]clusterv1beta1.DecisionGroupStatus{
				{DecisionGroupIndex: 0, DecisionGroupName: "canary", Decisions: []string{"rollout-decision-1"}, ClustersCount: 1},
				{DecisionGroupIndex: 1, Decisions: []string{"rollout-decision-2"}, ClustersCount: 2},
				{DecisionGroupIndex: 2, Decisions: []string{"rollout-decision-3"}, ClustersCount: 1},
			}))
		pds := placementDecisions(ctx, ns, "rollout")
		Expect(pds).To(ContainElement(And(HaveField("Name", "rollout-decision-1"),
			HaveField("Labels", And(HaveKeyWithValue(clusterv1beta1.PlacementLabel, "rollout"),
				HaveKeyWithValue(clusterv1beta1.DecisionGroupIndexLabel, "0"), HaveKeyWithValue(clusterv1beta1.DecisionGroupNameLabel, "canary"))),
			HaveField("Status.Decisions", ConsistOf(HaveField("ClusterName", canaries[0]))))))
		Expect(pds).To(ContainElement(And(HaveField("Name", "rollout-decision-3"),
			HaveField("Labels", And(HaveKeyWithValue(clusterv1beta1.DecisionGroupIndexLabel, "2"), HaveKeyWithValue(clusterv1beta1.DecisionGroupNameLabel, ""))))))

		By("cutting 101 clusters into PlacementDecisions of 100 and 1")
		many := newClusterName("pl-many")
		createSet(ctx, many, nil)
		bindSet(ctx, ns, many)
		for i := range 101 {
			name := fmt.Sprintf("%s-%03d", many, i)
			mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{clusterv1beta2.ClusterSetLabel: many}}}
			Expect(hubCP.Client.Create(ctx, mc)).To(Succeed())
			DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(hubCP.Client.Delete(ctx, mc))).To(Succeed()) })
		}
		// These clusters never report: tolerate the hub's unreachable taint.
		createPlacement(ctx, ns, "many", clusterv1beta1.PlacementSpec{ClusterSets: []string{many},
			Tolerations: []clusterv1beta1.Toleration{{Key: clusterv1.ManagedClusterTaintUnreachable, Operator: clusterv1beta1.TolerationOpExists}}})
		Eventually(func() []int {
			var sizes []int
			for _, pd := range placementDecisions(ctx, ns, "many") {
				sizes = append(sizes, len(pd.Status.Decisions))
			}
			return sizes
		}).Should(ConsistOf(100, 1))
		Eventually(func() int32 { return getPlacement(ctx, ns, "many").Status.NumberOfSelectedClusters }).Should(BeEquivalentTo(101))

		By("deleting its PlacementDecisions with the placement")
		Expect(hubCP.Client.Delete(ctx, getPlacement(ctx, ns, "many"))).To(Succeed())
		Eventually(func() []clusterv1beta1.PlacementDecision { return placementDecisions(ctx, ns, "many") }).Should(BeEmpty())
	})
})

var _ = Describe("Placement: spread", func() {
	It("spreads over a topology label and, with DoNotSchedule, stops short rather than break maxSkew", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "pl-spread")
		var inA []string
		for range 3 {
			c := newClusterName("pl-zone-a")
			inA = append(inA, c)
			createMember(ctx, c, set, member{labels: map[string]string{"zone": "a"}})
		}
		inB := newClusterName("pl-zone-b")
		createMember(ctx, inB, set, member{labels: map[string]string{"zone": "b"}})
		createPlacement(ctx, ns, "spread", clusterv1beta1.PlacementSpec{NumberOfClusters: ptr.To[int32](4),
			SpreadPolicy: clusterv1beta1.SpreadPolicy{SpreadConstraints: []clusterv1beta1.SpreadConstraintsTerm{{
				TopologyKey: "zone", TopologyKeyType: clusterv1beta1.TopologyKeyTypeLabel, MaxSkew: 1, WhenUnsatisfiable: clusterv1beta1.DoNotSchedule}}}})
		// Two of zone a and one of zone b keep the skew at 1; a third of zone a would make it 2.
		Eventually(chosen(ctx, ns, "spread")).Should(And(HaveLen(3), ContainElement(inB)))
		Eventually(placementCondition(ctx, ns, "spread", clusterv1beta1.PlacementConditionSatisfied)).Should(And(
			haveCondition(metav1.ConditionFalse, clusterv1beta1.ReasonNotAllDecisionsScheduled),
			HaveField("Message", ContainSubstring("3 of 4 requested clusters selected: of the 4 clusters in ManagedClusterSets ["+set+"], 4 qualify; "+
				"1 were left out to keep the DoNotSchedule spread constraint on zone within its maxSkew"))))

		By("taking a fourth cluster once another zone can balance it")
		inC := newClusterName("pl-zone-c")
		createMember(ctx, inC, set, member{labels: map[string]string{"zone": "c"}})
		Eventually(chosen(ctx, ns, "spread")).Should(And(HaveLen(4), ContainElements(inB, inC)))
		Eventually(placementCondition(ctx, ns, "spread", clusterv1beta1.PlacementConditionSatisfied)).
			Should(haveCondition(metav1.ConditionTrue, clusterv1beta1.ReasonAllDecisionsScheduled))
	})
})
