package integration

import (
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
)

// renewLease renews cluster c's lease as its agent does, and returns when.
func renewLease(ctx SpecContext, agent client.Client, c string) time.Time {
	GinkgoHelper()
	var renewed time.Time
	Eventually(func() error {
		lease := &coordinationv1.Lease{}
		if err := agent.Get(ctx, client.ObjectKey{Namespace: c, Name: clusterv1.ManagedClusterLeaseName}, lease); err != nil {
			return err
		}
		renewed = time.Now()
		lease.Spec.RenewTime = &metav1.MicroTime{Time: renewed}
		return agent.Update(ctx, lease)
	}).Should(Succeed())
	return renewed
}

// reportAvailable sets the Available condition as the agent does.
func reportAvailable(ctx SpecContext, agent client.Client, c string, status metav1.ConditionStatus) {
	GinkgoHelper()
	reason := clusterv1.ReasonManagedClusterAvailable
	if status == metav1.ConditionFalse {
		reason = clusterv1.ReasonManagedClusterKubeAPIServerUnavailable
	}
	Eventually(func() error {
		mc := &clusterv1.ManagedCluster{}
		if err := agent.Get(ctx, client.ObjectKey{Name: c}, mc); err != nil {
			return err
		}
		before := mc.DeepCopy()
		meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{
			Type: clusterv1.ManagedClusterConditionAvailable, Status: status, Reason: reason, Message: "reported by the test as the agent",
		})
		return agent.Status().Patch(ctx, mc, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	}).Should(Succeed())
}

// hubTaint finds a taint by key, for Eventually.
func hubTaint(ctx SpecContext, c, key string) func() *clusterv1.Taint {
	return func() *clusterv1.Taint {
		for _, t := range getCluster(ctx, c).Spec.Taints {
			if t.Key == key {
				return &t
			}
		}
		return nil
	}
}

var _ = Describe("Registration: cluster lease", func() {
	It("marks a cluster Unknown and unreachable after 5 lease periods without renewal, and back when its agent returns", func(ctx SpecContext) {
		const leaseSeconds = 2
		grace := 5 * leaseSeconds * time.Second
		c := newClusterName("lease")
		createCluster(ctx, c, func(mc *clusterv1.ManagedCluster) { mc.Spec.LeaseDurationSeconds = leaseSeconds })
		acceptCluster(ctx, c)
		agent := crClient(agentConfig(ctx, c, "agent1"))

		By("reporting Available while the lease is renewed")
		renewLease(ctx, agent, c)
		reportAvailable(ctx, agent, c, metav1.ConditionTrue)
		renewed := renewLease(ctx, agent, c)
		Eventually(hubTaint(ctx, c, clusterv1.ManagedClusterTaintUnreachable)).Should(BeNil())
		Expect(clusterCondition(ctx, c, clusterv1.ManagedClusterConditionAvailable)()).To(HaveField("Status", metav1.ConditionTrue))

		By("stopping the renewals")
		Eventually(clusterCondition(ctx, c, clusterv1.ManagedClusterConditionAvailable), grace+10*time.Second).Should(And(
			HaveField("Status", metav1.ConditionUnknown),
			HaveField("Reason", clusterv1.ReasonManagedClusterLeaseUpdateStopped),
		))
		cond := clusterCondition(ctx, c, clusterv1.ManagedClusterConditionAvailable)()
		// lastTransitionTime has a resolution of one second.
		Expect(cond.LastTransitionTime.Time).To(BeTemporally(">=", renewed.Add(grace).Truncate(time.Second)),
			"Available went Unknown before 5 × leaseDurationSeconds had passed")
		taint := hubTaint(ctx, c, clusterv1.ManagedClusterTaintUnreachable)()
		Expect(taint).NotTo(BeNil())
		Expect(taint.Effect).To(Equal(clusterv1.TaintEffectNoSelect))
		Expect(taint.TimeAdded.IsZero()).To(BeFalse())

		By("coming back when the agent renews and reports Available again")
		renewLease(ctx, agent, c)
		reportAvailable(ctx, agent, c, metav1.ConditionTrue)
		Eventually(hubTaint(ctx, c, clusterv1.ManagedClusterTaintUnreachable)).Should(BeNil())
		Expect(clusterCondition(ctx, c, clusterv1.ManagedClusterConditionAvailable)()).To(HaveField("Status", metav1.ConditionTrue))

		By("tainting it unavailable while its agent reports Available=False")
		renewLease(ctx, agent, c)
		reportAvailable(ctx, agent, c, metav1.ConditionFalse)
		Eventually(hubTaint(ctx, c, clusterv1.ManagedClusterTaintUnavailable)).Should(HaveField("Effect", clusterv1.TaintEffectNoSelect))
		Expect(hubTaint(ctx, c, clusterv1.ManagedClusterTaintUnreachable)()).To(BeNil())
	})

	It("serves the agents' lease requests at the node-high priority level, and only those", func(ctx SpecContext) {
		c := newClusterName("leasepri")
		createCluster(ctx, c)
		acceptCluster(ctx, c)
		cfg := agentConfig(ctx, c, "agent1")
		renewLease(ctx, crClient(cfg), c)
		schema, err := hubCP.Kube.FlowcontrolV1().FlowSchemas().Get(ctx, "flotilla-cluster-leases", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(schema.Spec.PriorityLevelConfiguration.Name).To(Equal("node-high"))

		// The API server names the FlowSchema that classified a request
		// in a response header.
		httpClient, err := rest.HTTPClientFor(cfg)
		Expect(err).NotTo(HaveOccurred())
		flowSchemaOf := func(path string) string {
			GinkgoHelper()
			resp, err := httpClient.Get(cfg.Host + path)
			Expect(err).NotTo(HaveOccurred())
			defer resp.Body.Close()
			Expect(resp.StatusCode).To(Equal(http.StatusOK), "GET %s", path)
			return resp.Header.Get("X-Kubernetes-PF-FlowSchema-UID")
		}
		Expect(flowSchemaOf("/apis/coordination.k8s.io/v1/namespaces/"+c+"/leases/"+clusterv1.ManagedClusterLeaseName)).
			To(Equal(string(schema.UID)), "the agent's lease request was not classified by flotilla-cluster-leases")
		Expect(flowSchemaOf("/apis/cluster.open-cluster-management.io/v1/managedclusters/"+c)).
			NotTo(Equal(string(schema.UID)), "the agent's other requests must keep their usual priority")
	})
})
