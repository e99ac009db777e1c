package integration

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

var _ = Describe("ManifestWorkReplicaSet: no churn when a cluster comes back", func() {
	// The counted replica set's Placement asks for one cluster, and the
	// spec's cluster is the only one in the set: while it is unreachable
	// the Placement has nowhere to move the work, so the work stays as a
	// fleet-wide one does (no replacement, kept for failover), and when the
	// cluster comes back the Placement chooses it again and the same work,
	// with the same objects on the spoke, carries on.
	It("keeps the fleet-wide and the counted works, and their objects on the spoke, of a cluster that went Unknown and came back", func(ctx SpecContext) {
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
		Eventually(workExists(ctx, c, "fleet")).Should(BeTrue())
		Eventually(workCond(ctx, c, "fleet", workv1.WorkApplied)).Should(haveStatus(metav1.ConditionTrue))
		hubUID := getWork(ctx, hubCP, c, "fleet").UID
		cm := &corev1.ConfigMap{}
		Expect(spoke.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "mwrs-version"}, cm)).To(Succeed())
		spokeUID := cm.UID

		By("holding a counted replica set there too: its Placement asks for one cluster")
		createPlacement(ctx, ns, "one", clusterv1beta1.PlacementSpec{NumberOfClusters: ptr.To[int32](1)})
		Eventually(chosen(ctx, ns, "one")).Should(ConsistOf(c))
		counted := &workv1alpha1.ManifestWorkReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "counted"},
			Spec: workv1alpha1.ManifestWorkReplicaSetSpec{
				PlacementRefs: []workv1alpha1.LocalPlacementReference{placementRef("one", workv1alpha1.RolloutStrategy{})},
				ManifestWorkTemplate: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{
					configMap("default", "mwrs-counted", map[string]string{"version": "v1"}),
				}}},
			},
		}
		Expect(hubCP.Client.Create(ctx, counted)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(hubCP.Client.Delete(ctx, counted))).To(Succeed()) })
		Eventually(workExists(ctx, c, "counted")).Should(BeTrue())
		Eventually(workCond(ctx, c, "counted", workv1.WorkApplied)).Should(haveStatus(metav1.ConditionTrue))
		countedUID := getWork(ctx, hubCP, c, "counted").UID
		countedCM := &corev1.ConfigMap{}
		Expect(spoke.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "mwrs-counted"}, countedCM)).To(Succeed())
		countedSpokeUID := countedCM.UID

		By("losing the cluster: tainted unreachable, it leaves the Placement's decisions, its work stays")
		setAvailable(ctx, c, metav1.ConditionUnknown)
		Eventually(chosen(ctx, ns, "all")).Should(BeEmpty())
		Eventually(chosen(ctx, ns, "one")).Should(BeEmpty(), "no other cluster to move the counted work to")
		Consistently(func() []types.UID { return []types.UID{workUID(ctx, c, "fleet")(), workUID(ctx, c, "counted")()} }, time.Second).
			Should(Equal([]types.UID{hubUID, countedUID}))

		By("getting it back: the Placement chooses it again, and the work was never deleted")
		setAvailable(ctx, c, metav1.ConditionTrue)
		Eventually(chosen(ctx, ns, "all")).Should(ConsistOf(c))
		Eventually(chosen(ctx, ns, "one")).Should(ConsistOf(c))
		Consistently(func() []types.UID { return []types.UID{workUID(ctx, c, "fleet")(), workUID(ctx, c, "counted")()} }, 3*time.Second).
			Should(Equal([]types.UID{hubUID, countedUID}))
		Expect(spoke.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "mwrs-version"}, cm)).To(Succeed())
		Expect(cm.UID).To(Equal(spokeUID), "the fleet-wide ConfigMap on the spoke was not deleted and re-created")
		Expect(cm.DeletionTimestamp).To(BeNil())
		Expect(spoke.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "mwrs-counted"}, countedCM)).To(Succeed())
		Expect(countedCM.UID).To(Equal(countedSpokeUID), "the counted ConfigMap on the spoke was not deleted and re-created")
		Expect(countedCM.DeletionTimestamp).To(BeNil())
		Eventually(workCond(ctx, c, "counted", workv1.WorkApplied)).Should(haveStatus(metav1.ConditionTrue))
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
