package integration

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// blipState is what must survive a blip of one cluster: the UIDs of its
// works and of its replicated policy, and that policy's history.
type blipState struct {
	fleet, counted, policy types.UID
	history                []string
}

var _ = Describe("Failover: a spoke blip moves nothing", func() {
	// Two clusters, a fleet-wide Placement and one that asks for two: while
	// c1 is tainted unavailable (its agent reports its API server down),
	// no other cluster can replace it, so everything of c1's stays, and
	// when it is back the Placements choose it again and carry on with the
	// same objects.
	var (
		ns, c1, c2, rootName string
	)
	state := func(ctx SpecContext) func() blipState {
		return func() blipState {
			st := blipState{fleet: workUID(ctx, c1, "fleet")(), counted: workUID(ctx, c1, "counted")()}
			cp := &policyv1.Policy{}
			if err := hubCP.Client.Get(ctx, client.ObjectKey{Namespace: c1, Name: rootName}, cp); err == nil && cp.DeletionTimestamp == nil {
				st.policy = cp.UID
				for _, d := range cp.Status.Details {
					for _, h := range d.History {
						st.history = append(st.history, h.Message)
					}
				}
			}
			return st
		}
	}
	setUp := func(ctx SpecContext, annotations map[string]string) blipState {
		GinkgoHelper()
		var set string
		set, ns = newSetWithNamespace(ctx, "blip")
		c1, c2 = newClusterName("blip1"), newClusterName("blip2")
		createPolicyMember(ctx, c1, set, nil)
		createPolicyMember(ctx, c2, set, nil)
		createPlacement(ctx, ns, "all", clusterv1beta1.PlacementSpec{})
		createPlacement(ctx, ns, "two", clusterv1beta1.PlacementSpec{NumberOfClusters: ptr.To[int32](2)})
		if annotations != nil {
			for _, name := range []string{"all", "two"} {
				Eventually(func() error {
					p := getPlacement(ctx, ns, name)
					p.Annotations = annotations
					return hubCP.Client.Update(ctx, p)
				}).Should(Succeed())
			}
		}
		Eventually(chosen(ctx, ns, "all")).Should(ConsistOf(c1, c2))
		Eventually(chosen(ctx, ns, "two")).Should(ConsistOf(c1, c2))
		createReplicaSet(ctx, ns, "fleet", "v1", placementRef("all", workv1alpha1.RolloutStrategy{}))
		createReplicaSet(ctx, ns, "counted", "v1", placementRef("two", workv1alpha1.RolloutStrategy{}))
		for _, rs := range []string{"fleet", "counted"} {
			Eventually(replicaSetWorks(ctx, ns, rs)).Should(Equal(versions("v1", c1, c2)))
			reportWork(ctx, c1, rs, healthy)
			reportWork(ctx, c2, rs, healthy)
		}
		root := rootPolicy(ns, "blip")
		Expect(hubCP.Client.Create(ctx, root)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(hubCP.Client.Delete(ctx, root))).To(Succeed()) })
		bindPolicy(ctx, ns, "blip", "all", policySubject(root.Name))
		rootName = ns + "." + root.Name
		Eventually(copiesOf(ctx, ns, root.Name)).Should(Equal(sorted(c1, c2)))
		reportCompliance(ctx, c1, rootName, policyv1.Compliant, "Compliant before the blip")
		reportCompliance(ctx, c2, rootName, policyv1.Compliant, "Compliant before the blip")
		before := state(ctx)()
		Expect(before.fleet).NotTo(BeEmpty())
		Expect(before.counted).NotTo(BeEmpty())
		Expect(before.policy).NotTo(BeEmpty())
		Expect(before.history).To(ConsistOf("Compliant before the blip"))
		// Creation times and taints have whole seconds, and a copy created
		// in the taint's second counts as a replacement made after it: the
		// outage starts in a later second than the set-up, as any real
		// outage does.
		created := getPolicy(ctx, c2, rootName).CreationTimestamp.Time
		Eventually(func() time.Time { return time.Now().Truncate(time.Second) }).Should(BeTemporally(">", created))
		return before
	}
	loseAPIServer := func(ctx SpecContext) {
		GinkgoHelper()
		reportAvailable(ctx, hubCP.Client, c1, metav1.ConditionFalse)
		Eventually(hubTaint(ctx, c1, clusterv1.ManagedClusterTaintUnavailable)).ShouldNot(BeNil())
		Eventually(chosen(ctx, ns, "all")).Should(ConsistOf(c2))
		Eventually(chosen(ctx, ns, "two")).Should(ConsistOf(c2), "no other cluster to replace c1")
	}

	It("keeps the fleet-wide and counted works and the replicated policy of a cluster tainted unavailable, and its return deletes nothing", func(ctx SpecContext) {
		before := setUp(ctx, nil)

		By("losing c1's API server: tainted unavailable, it leaves both Placements' decisions")
		loseAPIServer(ctx)
		Consistently(state(ctx), 3*time.Second).Should(Equal(before), "nothing of c1's is deleted while it is tainted")
		for _, rs := range []string{"fleet", "counted"} {
			Eventually(replicaSetCondition(ctx, ns, rs, workv1alpha1.ManifestWorkReplicaSetConditionManifestworkApplied)).
				Should(HaveField("Message", ContainSubstring("1 work kept on tainted cluster %s (unavailable) until it is chosen again, a replacement is Available, or the failover grace ends at", c1)))
			// The summary counts the chosen clusters' works: applied never
			// exceeds the desired total while a work is kept.
			Eventually(func() workv1alpha1.ManifestWorkReplicaSetSummary { return getReplicaSet(ctx, ns, rs).Status.Summary }).
				Should(And(HaveField("Total", 1), HaveField("DesiredTotal", 1), HaveField("Applied", 1), HaveField("Available", 1)))
		}

		By("getting it back: both Placements choose it again, and nothing was deleted and created again")
		reportAvailable(ctx, hubCP.Client, c1, metav1.ConditionTrue)
		Eventually(hubTaint(ctx, c1, clusterv1.ManagedClusterTaintUnavailable)).Should(BeNil())
		Eventually(chosen(ctx, ns, "all")).Should(ConsistOf(c1, c2))
		Eventually(chosen(ctx, ns, "two")).Should(ConsistOf(c1, c2))
		Consistently(state(ctx), 3*time.Second).Should(Equal(before))
		for _, rs := range []string{"fleet", "counted"} {
			Eventually(func() workv1alpha1.ManifestWorkReplicaSetSummary { return getReplicaSet(ctx, ns, rs).Status.Summary }).
				Should(And(HaveField("Total", 2), HaveField("DesiredTotal", 2), HaveField("Applied", 2)))
		}
	})

	It("deletes them once the taint is older than the Placements' failover grace", func(ctx SpecContext) {
		const grace = 4 * time.Second
		setUp(ctx, map[string]string{clusterv1beta1.FailoverGraceAnnotation: grace.String()})

		By("losing c1's API server for longer than the grace")
		loseAPIServer(ctx)
		taint := hubTaint(ctx, c1, clusterv1.ManagedClusterTaintUnavailable)()
		Expect(workUID(ctx, c1, "fleet")()).NotTo(BeEmpty(), "kept within the grace")
		Eventually(state(ctx), grace+10*time.Second).Should(Equal(blipState{}), "deleted once the grace ran out")
		// Timestamps have whole seconds.
		Expect(time.Now()).To(BeTemporally(">=", taint.TimeAdded.Add(grace-time.Second)), "deleted before the grace ran out")
	})
})
