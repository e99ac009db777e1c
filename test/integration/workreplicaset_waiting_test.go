package integration

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

var _ = Describe("ManifestWorkReplicaSet: waiting for its Placement", func() {
	It("says the rollout waits for a Placement that does not exist, and completes once it is created and decides", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "mwrs-wait")
		c := newClusterName("mwrs-wait")
		createPolicyMember(ctx, c, set, nil)
		createReplicaSet(ctx, ns, "app", "v1", placementRef("later", workv1alpha1.RolloutStrategy{}))
		Eventually(replicaSetCondition(ctx, ns, "app", workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut)).Should(And(
			haveCondition(metav1.ConditionFalse, workv1alpha1.ReasonProgressing),
			HaveField("Message", "Placement later: waiting for it to be created")))
		Expect(replicaSetCondition(ctx, ns, "app", workv1alpha1.ManifestWorkReplicaSetConditionPlacementVerified)()).
			To(haveCondition(metav1.ConditionFalse, workv1alpha1.ReasonPlacementDecisionNotFound))

		createPlacement(ctx, ns, "later", clusterv1beta1.PlacementSpec{})
		Eventually(replicaSetWorks(ctx, ns, "app")).Should(Equal(versions("v1", c)))
		reportWork(ctx, c, "app", healthy)
		Eventually(replicaSetCondition(ctx, ns, "app", workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut)).
			Should(haveCondition(metav1.ConditionTrue, workv1alpha1.ReasonComplete))
	})
})
