package integration

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

var _ = Describe("ManifestWorkReplicaSet: safe failover", func() {
	It("keeps the work of a cluster that turned unreachable until its replacement's work is Available", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "mwrs-fo")
		c1, c2, c3 := newClusterName("mwrs-fo1"), newClusterName("mwrs-fo2"), newClusterName("mwrs-fo3")
		createPolicyMember(ctx, c1, set, nil)
		createPolicyMember(ctx, c2, set, nil)
		createPlacement(ctx, ns, "two", clusterv1beta1.PlacementSpec{NumberOfClusters: ptr.To[int32](2),
			Tolerations: []clusterv1beta1.Toleration{{Key: clusterv1.ManagedClusterTaintUnreachable,
				Operator: clusterv1beta1.TolerationOpExists, TolerationSeconds: ptr.To[int64](2)}}})
		Eventually(chosen(ctx, ns, "two")).Should(ConsistOf(c1, c2))
		createReplicaSet(ctx, ns, "app", "v1", placementRef("two", workv1alpha1.RolloutStrategy{}))
		Eventually(replicaSetWorks(ctx, ns, "app")).Should(Equal(versions("v1", c1, c2)))
		reportWork(ctx, c1, "app", healthy)
		reportWork(ctx, c2, "app", healthy)
		createPolicyMember(ctx, c3, set, nil)
		Consistently(chosen(ctx, ns, "two"), time.Second).Should(ConsistOf(c1, c2))

		By("losing c1: the hub taints it unreachable, the placement replaces it once the toleration runs out")
		Eventually(func() error {
			mc := getCluster(ctx, c1)
			meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{Type: clusterv1.ManagedClusterConditionAvailable,
				Status: metav1.ConditionUnknown, Reason: clusterv1.ReasonManagedClusterLeaseUpdateStopped, Message: "set by the test"})
			return hubCP.Client.Status().Update(ctx, mc)
		}).Should(Succeed())
		Eventually(chosen(ctx, ns, "two"), 15*time.Second).Should(ConsistOf(c2, c3))

		By("keeping c1's work while c3's is not Available, and saying so")
		Eventually(replicaSetWorks(ctx, ns, "app")).Should(Equal(versions("v1", c1, c2, c3)))
		Eventually(replicaSetCondition(ctx, ns, "app", workv1alpha1.ManifestWorkReplicaSetConditionManifestworkApplied)).
			Should(HaveField("Message", ContainSubstring("1 work kept on tainted cluster %s (unreachable) until %s is Available", c1, c3)))
		// The summary counts the chosen clusters' works, not the one kept.
		Expect(getReplicaSet(ctx, ns, "app").Status.Summary).To(And(HaveField("Total", 2), HaveField("DesiredTotal", 2)))
		Consistently(workExists(ctx, c1, "app"), 2*time.Second).Should(BeTrue())

		By("deleting c1's work once c3's reports Available")
		reportWork(ctx, c3, "app", healthy)
		Eventually(workExists(ctx, c1, "app")).Should(BeFalse())
		Eventually(replicaSetCondition(ctx, ns, "app", workv1alpha1.ManifestWorkReplicaSetConditionManifestworkApplied)).
			Should(And(haveCondition(metav1.ConditionTrue, workv1alpha1.ReasonAsExpected), HaveField("Message", Not(ContainSubstring("kept")))))
	})
})
