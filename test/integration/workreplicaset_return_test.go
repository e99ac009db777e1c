package integration

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

var _ = Describe("ManifestWorkReplicaSet: no churn when a cluster comes back", func() {
	It("keeps the fleet-wide work, and its objects on the spoke, of a cluster that went Unknown and came back", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "mwrs-back")
		c := newClusterName("mwrs-back")
		// The lease outlives the spec: only the test says the cluster is gone.
		createCluster(ctx, c, func(mc *clusterv1.ManagedCluster) {
			mc.Labels = map[string]string{clusterv1beta2.ClusterSetLabel: set}
			mc.Spec.LeaseDurationSeconds = 3600
		})
		DeferCleanup(func(ctx SpecContext) { releaseWorks(ctx, hubCP, c) })
		acceptCluster(ctx, c)
		cluster := workCluster{name: c, hubCfg: agentConfig(ctx, c, "agent1")}
		setAvailable(ctx, c, metav1.ConditionTrue)
		Eventually(func() []clusterv1.Taint { return getCluster(ctx, c).Spec.Taints }).Should(BeEmpty())

		spoke := newWorkSpoke(ctx)
		startWorkAgent(cluster, spoke)
		createPlacement(ctx, ns, "all", clusterv1beta1.PlacementSpec{})
		Eventually(chosen(ctx, ns, "all")).Should(ConsistOf(c))
		createReplicaSet(ctx, ns, "fleet", "v1", placementRef("all", workv1alpha1.RolloutStrategy{}))
		Eventually(workCond(ctx, c, "fleet", workv1.WorkApplied)).Should(haveStatus(metav1.ConditionTrue))
		hubUID := getWork(ctx, hubCP, c, "fleet").UID
		cm := &corev1.ConfigMap{}
		Expect(spoke.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "mwrs-version"}, cm)).To(Succeed())
		spokeUID := cm.UID

		By("losing the cluster: tainted unreachable, it leaves the Placement's decisions, its work stays")
		setAvailable(ctx, c, metav1.ConditionUnknown)
		Eventually(chosen(ctx, ns, "all")).Should(BeEmpty())
		Consistently(workUID(ctx, c, "fleet"), time.Second).Should(Equal(hubUID))

		By("getting it back: the Placement chooses it again, and the work was never deleted")
		setAvailable(ctx, c, metav1.ConditionTrue)
		Eventually(chosen(ctx, ns, "all")).Should(ConsistOf(c))
		Consistently(workUID(ctx, c, "fleet"), 3*time.Second).Should(Equal(hubUID))
		Expect(spoke.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "mwrs-version"}, cm)).To(Succeed())
		Expect(cm.UID).To(Equal(spokeUID), "the ConfigMap on the spoke was not deleted and re-created")
		Expect(cm.DeletionTimestamp).To(BeNil())
	})
})

// setAvailable sets the Available condition of ManagedCluster c as the
// hub admin, as an agent's report or the hub's lease check would.
func setAvailable(ctx SpecContext, c string, status metav1.ConditionStatus) {
	GinkgoHelper()
	reason := clusterv1.ReasonManagedClusterAvailable
	if status != metav1.ConditionTrue {
		reason = clusterv1.ReasonManagedClusterLeaseUpdateStopped
	}
	Eventually(func() error {
		mc := getCluster(ctx, c)
		meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{Type: clusterv1.ManagedClusterConditionAvailable,
			Status: status, Reason: reason, Message: "set by the test"})
		return hubCP.Client.Status().Update(ctx, mc)
	}).Should(Succeed())
}

// workUID reads the UID of work name in namespace c ("" while it is gone
// or being deleted), for Eventually and Consistently.
func workUID(ctx SpecContext, c, name string) func() types.UID {
	return func() types.UID {
		w := &workv1.ManifestWork{}
		if err := hubCP.Client.Get(ctx, client.ObjectKey{Namespace: c, Name: name}, w); err != nil || w.DeletionTimestamp != nil {
			return ""
		}
		return w.UID
	}
}
