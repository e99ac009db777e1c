package integration

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// progressive is a Progressive strategy of maxConcurrency 1 with cfg.
func progressive(cfg workv1alpha1.RolloutConfig) workv1alpha1.RolloutStrategy {
	return workv1alpha1.RolloutStrategy{Type: workv1alpha1.Progressive, Progressive: &workv1alpha1.RolloutProgressive{
		MaxConcurrency: intstr.FromInt32(1), RolloutConfig: cfg}}
}

// rolloutClusters creates three prod clusters whose names sort in order,
// a namespace with a prod Placement "prod", and returns them.
func rolloutClusters(ctx SpecContext, prefix string) (ns string, c1, c2, c3 string) {
	GinkgoHelper()
	set, ns := newSetWithNamespace(ctx, prefix)
	c1, c2, c3 = newClusterName(prefix+"1"), newClusterName(prefix+"2"), newClusterName(prefix+"3")
	for _, c := range []string{c1, c2, c3} {
		createPolicyMember(ctx, c, set, map[string]string{"env": "prod"})
	}
	prodPlacement(ctx, ns, "prod")
	Eventually(chosen(ctx, ns, "prod")).Should(ConsistOf(c1, c2, c3))
	return ns, c1, c2, c3
}

// holdsFor checks that the works stay as want for a while: the rollout
// must not move on by itself.
func holdsFor(ctx SpecContext, ns, name string, want map[string]string) {
	GinkgoHelper()
	Eventually(replicaSetWorks(ctx, ns, name)).Should(Equal(want))
	Consistently(replicaSetWorks(ctx, ns, name), time.Second).Should(Equal(want))
}

var _ = Describe("ManifestWorkReplicaSet: rollout", func() {
	It("Progressive with maxConcurrency 1 creates, then updates, one cluster at a time as each becomes Available", func(ctx SpecContext) {
		ns, c1, c2, c3 := rolloutClusters(ctx, "mwrs-pr")
		createReplicaSet(ctx, ns, "app", "v1", placementRef("prod", progressive(workv1alpha1.RolloutConfig{})))

		By("creating the works one cluster at a time")
		holdsFor(ctx, ns, "app", versions("v1", c1))
		reportWork(ctx, c1, "app", healthy)
		holdsFor(ctx, ns, "app", versions("v1", c1, c2))
		reportWork(ctx, c2, "app", healthy)
		holdsFor(ctx, ns, "app", versions("v1", c1, c2, c3))
		reportWork(ctx, c3, "app", healthy)
		Eventually(replicaSetCondition(ctx, ns, "app", workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut)).
			Should(haveCondition(metav1.ConditionTrue, workv1alpha1.ReasonComplete))

		By("updating them one cluster at a time after a template change")
		setTemplateVersion(ctx, ns, "app", "v2")
		holdsFor(ctx, ns, "app", map[string]string{c1: "v2", c2: "v1", c3: "v1"})
		Expect(replicaSetCondition(ctx, ns, "app", workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut)()).
			To(haveCondition(metav1.ConditionFalse, workv1alpha1.ReasonProgressing))
		Eventually(func() int { return getReplicaSet(ctx, ns, "app").Status.Summary.Updated }).Should(Equal(1))
		reportWork(ctx, c1, "app", healthy)
		holdsFor(ctx, ns, "app", map[string]string{c1: "v2", c2: "v2", c3: "v1"})
		reportWork(ctx, c2, "app", healthy)
		holdsFor(ctx, ns, "app", versions("v2", c1, c2, c3))
		reportWork(ctx, c3, "app", healthy)
		Eventually(replicaSetCondition(ctx, ns, "app", workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut)).
			Should(haveCondition(metav1.ConditionTrue, workv1alpha1.ReasonComplete))
		Expect(getReplicaSet(ctx, ns, "app").Status.Summary.Updated).To(Equal(3))
	})

	It("ProgressivePerGroup rolls out one decision group at a time", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "mwrs-grp")
		canary, g2, g3 := newClusterName("mwrs-grp"), newClusterName("mwrs-grp"), newClusterName("mwrs-grp")
		createPolicyMember(ctx, canary, set, map[string]string{"canary": "true"})
		createPolicyMember(ctx, g2, set, nil)
		createPolicyMember(ctx, g3, set, nil)
		createPlacement(ctx, ns, "groups", clusterv1beta1.PlacementSpec{DecisionStrategy: clusterv1beta1.DecisionStrategy{
			GroupStrategy: clusterv1beta1.GroupStrategy{DecisionGroups: []clusterv1beta1.DecisionGroup{{GroupName: "canary",
				ClusterSelector: clusterv1beta1.GroupClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"canary": "true"}}}}}}}})
		Eventually(chosen(ctx, ns, "groups")).Should(ConsistOf(canary, g2, g3))
		createReplicaSet(ctx, ns, "app", "v1", placementRef("groups", workv1alpha1.RolloutStrategy{Type: workv1alpha1.ProgressivePerGroup}))

		holdsFor(ctx, ns, "app", versions("v1", canary))
		reportWork(ctx, canary, "app", healthy)
		holdsFor(ctx, ns, "app", versions("v1", canary, g2, g3))
		Eventually(availableGroups(ctx, ns, "app")).Should(Equal("1/2"))
		reportWork(ctx, g2, "app", healthy)
		reportWork(ctx, g3, "app", healthy)
		Eventually(availableGroups(ctx, ns, "app")).Should(Equal("2/2"))
	})

	It("stops when more clusters are Degraded than maxFailures, and goes on when a failure clears", func(ctx SpecContext) {
		ns, c1, c2, c3 := rolloutClusters(ctx, "mwrs-fail")
		createReplicaSet(ctx, ns, "app", "v1", placementRef("prod", progressive(workv1alpha1.RolloutConfig{MaxFailures: intstr.FromInt32(1)})))

		holdsFor(ctx, ns, "app", versions("v1", c1))
		reportWork(ctx, c1, "app", workState{applied: true, degraded: true})
		By("going on past one failure, which maxFailures allows")
		holdsFor(ctx, ns, "app", versions("v1", c1, c2))
		reportWork(ctx, c2, "app", workState{applied: true, degraded: true})
		By("stopping at the second, naming the failing clusters")
		Eventually(replicaSetCondition(ctx, ns, "app", workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut)).Should(And(
			haveCondition(metav1.ConditionFalse, workv1alpha1.ReasonNotAsExpected),
			HaveField("Message", And(ContainSubstring("rollout stopped"), ContainSubstring(c1+" (Degraded"), ContainSubstring(c2+" (Degraded")))))
		holdsFor(ctx, ns, "app", versions("v1", c1, c2))

		By("going on once a cluster recovers")
		reportWork(ctx, c1, "app", healthy)
		Eventually(replicaSetWorks(ctx, ns, "app")).Should(Equal(versions("v1", c1, c2, c3)))
	})

	It("waits minSuccessTime after a cluster became Available before the next, without any other event", func(ctx SpecContext) {
		ns, c1, c2, _ := rolloutClusters(ctx, "mwrs-mst")
		createReplicaSet(ctx, ns, "app", "v1", placementRef("prod", progressive(workv1alpha1.RolloutConfig{
			MinSuccessTime: metav1.Duration{Duration: 3 * time.Second}})))

		Eventually(replicaSetWorks(ctx, ns, "app")).Should(Equal(versions("v1", c1)))
		reportWork(ctx, c1, "app", healthy)
		reported := time.Now()
		Eventually(replicaSetWorks(ctx, ns, "app"), 15*time.Second).Should(HaveKey(c2))
		// Condition times have whole seconds: the wait may end up to one second early.
		Expect(time.Since(reported)).To(BeNumerically(">=", 2*time.Second), "the next cluster got its work before minSuccessTime")
	})

	It("counts a cluster that is not Available within progressDeadline as failed, without any other event", func(ctx SpecContext) {
		ns, c1, c2, c3 := rolloutClusters(ctx, "mwrs-dl")
		createReplicaSet(ctx, ns, "app", "v1", placementRef("prod", progressive(workv1alpha1.RolloutConfig{
			ProgressDeadline: "2s", MaxFailures: intstr.FromInt32(1)})))

		Eventually(replicaSetWorks(ctx, ns, "app")).Should(Equal(versions("v1", c1)))
		By("moving on after the deadline of the first cluster, which maxFailures allows")
		Eventually(replicaSetWorks(ctx, ns, "app"), 15*time.Second).Should(Equal(versions("v1", c1, c2)))
		By("stopping after the deadline of the second")
		Eventually(replicaSetCondition(ctx, ns, "app", workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut), 15*time.Second).Should(And(
			haveCondition(metav1.ConditionFalse, workv1alpha1.ReasonNotAsExpected),
			HaveField("Message", ContainSubstring(c2+" (not Available within progressDeadline 2s: no Available condition for generation 1)"))))
		Consistently(replicaSetWorks(ctx, ns, "app"), 3*time.Second).ShouldNot(HaveKey(c3))
	})
})
