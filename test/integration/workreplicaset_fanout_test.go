package integration

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

var _ = Describe("ManifestWorkReplicaSet: fan-out", func() {
	It("creates a work in each chosen cluster, follows clusters that leave and join, and counts the works in its status", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "mwrs-fan")
		c1, c2, c3 := newClusterName("mwrs-a"), newClusterName("mwrs-b"), newClusterName("mwrs-c")
		createPolicyMember(ctx, c1, set, map[string]string{"env": "prod"})
		createPolicyMember(ctx, c2, set, map[string]string{"env": "prod"})
		createPolicyMember(ctx, c3, set, map[string]string{"env": "dev"})
		prodPlacement(ctx, ns, "prod")
		createReplicaSet(ctx, ns, "app", "v1", placementRef("prod", workv1alpha1.RolloutStrategy{}))

		By("creating the work, labelled, in the namespaces of the chosen clusters only")
		Eventually(replicaSetWorks(ctx, ns, "app")).Should(Equal(versions("v1", c1, c2)))
		w := getWork(ctx, hubCP, c1, "app")
		Expect(w.Labels).To(HaveKeyWithValue(workv1.ManifestWorkReplicaSetLabel, ns+".app"))
		Expect(w.Labels).To(HaveKeyWithValue(workv1.ManifestWorkReplicaSetPlacementNameLabel, "prod"))
		Eventually(replicaSetCondition(ctx, ns, "app", workv1alpha1.ManifestWorkReplicaSetConditionPlacementVerified)).
			Should(haveCondition(metav1.ConditionTrue, workv1alpha1.ReasonAsExpected))
		Eventually(replicaSetCondition(ctx, ns, "app", workv1alpha1.ManifestWorkReplicaSetConditionManifestworkApplied)).
			Should(haveCondition(metav1.ConditionTrue, workv1alpha1.ReasonAsExpected))
		Expect(replicaSetCondition(ctx, ns, "app", workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut)()).
			To(haveCondition(metav1.ConditionFalse, workv1alpha1.ReasonProgressing))

		By("counting what the agents report")
		reportWork(ctx, c1, "app", healthy)
		reportWork(ctx, c2, "app", workState{applied: true, degraded: true, progressing: true})
		Eventually(func() workv1alpha1.ManifestWorkReplicaSetSummary { return getReplicaSet(ctx, ns, "app").Status.Summary }).
			Should(Equal(workv1alpha1.ManifestWorkReplicaSetSummary{Total: 2, DesiredTotal: 2, Applied: 2, Available: 1, Degraded: 1, Progressing: 1, Updated: 2}))
		ps := getReplicaSet(ctx, ns, "app").Status.PlacementsSummary
		Expect(ps).To(HaveLen(1))
		Expect(ps[0].Name).To(Equal("prod"))
		Expect(ps[0].AvailableDecisionGroups).To(Equal("0/1"))
		reportWork(ctx, c2, "app", healthy)
		Eventually(replicaSetCondition(ctx, ns, "app", workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut)).
			Should(haveCondition(metav1.ConditionTrue, workv1alpha1.ReasonComplete))
		Expect(getReplicaSet(ctx, ns, "app").Status.PlacementsSummary[0].AvailableDecisionGroups).To(Equal("1/1"))

		By("removing the work of a cluster that leaves the placement")
		relabelCluster(ctx, c2, map[string]string{"env": "dev"})
		Eventually(replicaSetWorks(ctx, ns, "app")).Should(Equal(versions("v1", c1)))

		By("creating the work of a cluster that joins it")
		relabelCluster(ctx, c3, map[string]string{"env": "prod"})
		Eventually(replicaSetWorks(ctx, ns, "app")).Should(Equal(versions("v1", c1, c3)))
		Eventually(func() int { return getReplicaSet(ctx, ns, "app").Status.Summary.DesiredTotal }).Should(Equal(2))
	})

	It("does not take over a work of the same name that belongs to someone else, and says so", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "mwrs-own")
		c1, c2 := newClusterName("mwrs-own"), newClusterName("mwrs-own")
		createPolicyMember(ctx, c1, set, map[string]string{"env": "prod"})
		createPolicyMember(ctx, c2, set, map[string]string{"env": "prod"})
		foreign := newWork(c1, "app", configMap("default", "theirs", map[string]string{"owner": "someone"}))
		Expect(hubCP.Client.Create(ctx, foreign)).To(Succeed())
		prodPlacement(ctx, ns, "prod")
		createReplicaSet(ctx, ns, "app", "v1", placementRef("prod", workv1alpha1.RolloutStrategy{}))

		Eventually(replicaSetWorks(ctx, ns, "app")).Should(Equal(versions("v1", c2)))
		Eventually(replicaSetCondition(ctx, ns, "app", workv1alpha1.ManifestWorkReplicaSetConditionManifestworkApplied)).Should(And(
			haveCondition(metav1.ConditionFalse, workv1alpha1.ReasonNotAsExpected),
			HaveField("Message", ContainSubstring("does not own exists in the namespaces of clusters [%s]", c1))))
		theirs := getWork(ctx, hubCP, c1, "app")
		Expect(theirs.Labels).NotTo(HaveKey(workv1.ManifestWorkReplicaSetLabel))
		Expect(theirs.Spec).To(Equal(foreign.Spec))
	})
})

var _ = Describe("ManifestWorkReplicaSet: bad input", func() {
	It("creates nothing and says what to fix when its works could not carry the replica-set label", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "mwrs-bad")
		c1 := newClusterName("mwrs-bad")
		createPolicyMember(ctx, c1, set, map[string]string{"env": "prod"})
		prodPlacement(ctx, ns, "prod")
		long := "a-replica-set-name-that-is-far-too-long-for-a-label-value-x"
		createReplicaSet(ctx, ns, long, "v1", placementRef("prod", workv1alpha1.RolloutStrategy{}))
		Eventually(replicaSetCondition(ctx, ns, long, workv1alpha1.ManifestWorkReplicaSetConditionManifestworkApplied)).Should(And(
			haveCondition(metav1.ConditionFalse, workv1alpha1.ReasonNotAsExpected),
			HaveField("Message", ContainSubstring("shorten the namespace or the name to 63 characters together"))))
		Consistently(workExists(ctx, c1, long), time.Second).Should(BeFalse())
	})
})

var _ = Describe("ManifestWorkReplicaSet: deletion", func() {
	// holdWork puts a finalizer on a work, as an agent does until it has
	// removed what the work applied.
	holdWork := func(ctx SpecContext, cluster, name string) {
		GinkgoHelper()
		Eventually(func() error {
			w := getWork(ctx, hubCP, cluster, name)
			controllerutil.AddFinalizer(w, "test.flotilla.io/agent")
			return hubCP.Client.Update(ctx, w)
		}).Should(Succeed())
	}
	releaseWork := func(ctx SpecContext, cluster, name string) {
		GinkgoHelper()
		Eventually(func() error {
			w := getWork(ctx, hubCP, cluster, name)
			controllerutil.RemoveFinalizer(w, "test.flotilla.io/agent")
			return hubCP.Client.Update(ctx, w)
		}).Should(Succeed())
	}
	gone := func(ctx SpecContext, ns, name string) func() bool {
		return func() bool {
			err := hubCP.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &workv1alpha1.ManifestWorkReplicaSet{})
			return apierrors.IsNotFound(err)
		}
	}

	It("with Foreground waits until its works are gone, with Background goes at once", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "mwrs-del")
		c1 := newClusterName("mwrs-del")
		createPolicyMember(ctx, c1, set, map[string]string{"env": "prod"})
		prodPlacement(ctx, ns, "prod")
		createReplicaSet(ctx, ns, "fg", "v1", placementRef("prod", workv1alpha1.RolloutStrategy{}))
		createReplicaSet(ctx, ns, "bg", "v1", placementRef("prod", workv1alpha1.RolloutStrategy{}))
		Eventually(func() error {
			fg := getReplicaSet(ctx, ns, "fg")
			fg.Spec.CascadeDeletionPolicy = workv1alpha1.Foreground
			return hubCP.Client.Update(ctx, fg)
		}).Should(Succeed())
		Eventually(workExists(ctx, c1, "fg")).Should(BeTrue())
		Eventually(workExists(ctx, c1, "bg")).Should(BeTrue())
		holdWork(ctx, c1, "fg")
		holdWork(ctx, c1, "bg")
		Expect(getReplicaSet(ctx, ns, "fg").Finalizers).To(ContainElement(workv1alpha1.ManifestWorkReplicaSetFinalizer))

		By("Foreground: the works are deleted, the replica set stays while one remains")
		Expect(hubCP.Client.Delete(ctx, getReplicaSet(ctx, ns, "fg"))).To(Succeed())
		Eventually(func() bool { return getWork(ctx, hubCP, c1, "fg").DeletionTimestamp != nil }).Should(BeTrue())
		Consistently(gone(ctx, ns, "fg"), 2*time.Second).Should(BeFalse())
		releaseWork(ctx, c1, "fg")
		Eventually(gone(ctx, ns, "fg")).Should(BeTrue())

		By("Background: the replica set goes while its work is still being removed")
		Expect(hubCP.Client.Delete(ctx, getReplicaSet(ctx, ns, "bg"))).To(Succeed())
		Eventually(gone(ctx, ns, "bg")).Should(BeTrue())
		w := getWork(ctx, hubCP, c1, "bg")
		Expect(w.DeletionTimestamp).NotTo(BeNil())
		releaseWork(ctx, c1, "bg")
		Eventually(workExists(ctx, c1, "bg")).Should(BeFalse())
	})
})
