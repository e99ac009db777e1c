package integration

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
)

// renewLeaseAt sets cluster c's lease's renew time to at, as its agent
// renewing at that moment does.
func renewLeaseAt(ctx SpecContext, agent client.Client, c string, at time.Time) {
	GinkgoHelper()
	Eventually(func() error {
		lease := &coordinationv1.Lease{}
		if err := agent.Get(ctx, client.ObjectKey{Namespace: c, Name: clusterv1.ManagedClusterLeaseName}, lease); err != nil {
			return err
		}
		lease.Spec.RenewTime = &metav1.MicroTime{Time: at}
		return agent.Update(ctx, lease)
	}).Should(Succeed())
}

var _ = Describe("Registration: changing the lease duration", func() {
	// The case is 60 s to 10 s; the spec plays it at a fifth of
	// the scale, 12 s to 2 s, where the hub's settle time (5 s, its
	// floor) is longer than the new period.
	It("keeps a healthy cluster Available when its lease duration goes from 12 s to 2 s, and applies the new grace once the agent renews at 2 s", func(ctx SpecContext) {
		c := newClusterName("leasechange")
		createCluster(ctx, c, func(mc *clusterv1.ManagedCluster) { mc.Spec.LeaseDurationSeconds = 12 })
		acceptCluster(ctx, c)
		agent := crClient(agentConfig(ctx, c, "agent1"))

		// The agent renews every 12 s; the spec plays it at the worst
		// moment: its last renewal was 11 s ago, longer than the new grace
		// of 5 × 2 s, and it renews next when its 12 s sleep ends, 1 s
		// after the change, then every 2 s.
		lastRenewal := time.Now().Add(-11 * time.Second)
		renewLeaseAt(ctx, agent, c, lastRenewal)
		reportAvailable(ctx, agent, c, metav1.ConditionTrue)
		Eventually(hubTaint(ctx, c, clusterv1.ManagedClusterTaintUnreachable)).Should(BeNil())

		By("lowering spec.leaseDurationSeconds to 2")
		Eventually(func() error {
			mc := getCluster(ctx, c)
			mc.Spec.LeaseDurationSeconds = 2
			return hubCP.Client.Update(ctx, mc)
		}).Should(Succeed())

		// A guard, not a synchronisation: over the agent's last old-period
		// sleep and four renewals at the new period (9 s, the last two
		// after the hub's settle time), the cluster must never be Unknown
		// or tainted unreachable.
		notUnknown := func(g Gomega) {
			mc := getCluster(ctx, c)
			for _, cond := range mc.Status.Conditions {
				if cond.Type == clusterv1.ManagedClusterConditionAvailable {
					g.Expect(cond.Status).To(Equal(metav1.ConditionTrue), cond.Message)
				}
			}
			g.Expect(mc.Spec.Taints).To(BeEmpty())
		}
		renewals := []time.Time{lastRenewal.Add(12 * time.Second)}
		for range 4 {
			renewals = append(renewals, renewals[len(renewals)-1].Add(2*time.Second))
		}
		for _, at := range renewals {
			Consistently(notUnknown).WithContext(ctx).WithTimeout(time.Until(at)).WithPolling(200 * time.Millisecond).Should(Succeed())
			renewLeaseAt(ctx, agent, c, time.Now())
			lastRenewal = time.Now()
		}

		By("stopping the renewals: the new grace of 10 s applies, not the old one of 60 s")
		Eventually(clusterCondition(ctx, c, clusterv1.ManagedClusterConditionAvailable), 10*time.Second+20*time.Second).
			Should(HaveField("Status", metav1.ConditionUnknown))
		cond := clusterCondition(ctx, c, clusterv1.ManagedClusterConditionAvailable)()
		Expect(cond.LastTransitionTime.Time).To(BeTemporally(">=", lastRenewal.Add(10*time.Second).Truncate(time.Second)))
	})
})
