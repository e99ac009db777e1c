package integration

import (
	"context"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
)

var _ = Describe("CLI accept", func() {
	It("approves a join CSR for the cluster and sets hubAcceptsClient", func(ctx SpecContext) {
		kube, c := bootstrapClients(hubInit(ctx).HubToken)
		createManagedCluster(ctx, c, "cli-accept-ok")
		csr := createCSR(ctx, kube, "cli-accept-ok", "cli-accept-ok")
		Expect(csrApproved(ctx, csr)).To(BeFalse())

		res := onHub(ctx, "accept", "--clusters", "cli-accept-ok")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stderr).To(ContainSubstring("approved CSR " + csr))
		Expect(csrApproved(ctx, csr)).To(BeTrue())
		Expect(hubAcceptsClient(ctx, "cli-accept-ok")).To(BeTrue())

		By("denying it again")
		res = onHub(ctx, "deny", "--clusters", "cli-accept-ok")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(hubAcceptsClient(ctx, "cli-accept-ok")).To(BeFalse())
	})

	It("refuses a CSR labelled for one cluster whose subject names another", func(ctx SpecContext) {
		kube, c := bootstrapClients(hubInit(ctx).HubToken)
		createManagedCluster(ctx, c, "cli-accept-a")
		spoofed := createCSR(ctx, kube, "cli-accept-a", "cli-accept-b")

		res := onHub(ctx, "accept", "--clusters", "cli-accept-a")
		Expect(res.Code).NotTo(Equal(0))
		Expect(res.Stderr).To(ContainSubstring("refused to approve 1 CSR(s) of cluster cli-accept-a"))
		Expect(res.Stderr).To(ContainSubstring(spoofed + `: its subject CN "system:open-cluster-management:cli-accept-b:agent1" does not name cluster cli-accept-a`))
		Expect(res.Stderr).To(ContainSubstring("--skip-approve-check"))
		Expect(csrApproved(ctx, spoofed)).To(BeFalse())
		Expect(hubAcceptsClient(ctx, "cli-accept-a")).To(BeFalse(), "nothing is accepted while a CSR is refused")

		By("refusing it with --wait too, at once")
		res = onHub(ctx, "accept", "--clusters", "cli-accept-a", "--wait", "--timeout", "1m")
		Expect(res.Code).NotTo(Equal(0))
		Expect(res.Stderr).To(ContainSubstring("refused to approve"))
		Expect(csrApproved(ctx, spoofed)).To(BeFalse())
	})

	It("accepts a fleet with --wait from one list and watch of the hub, and refuses only the suspicious cluster", func(ctx SpecContext) {
		kube, c := bootstrapClients(hubInit(ctx).HubToken)
		// More clusters than accept reads one by one.
		var names []string
		csrs := map[string]string{}
		for i := range 10 {
			name := fmt.Sprintf("cli-fleet-%02d", i)
			names = append(names, name)
			createManagedCluster(ctx, c, name)
			subject := name
			if i == 3 {
				subject = "cli-fleet-other"
			}
			csrs[name] = createCSR(ctx, kube, name, subject)
		}

		res := onHub(ctx, "accept", "--clusters", strings.Join(names, ","), "--wait", "--timeout", "3s")
		Expect(res.Code).NotTo(Equal(0), "no agent joins in this spec")
		Expect(res.Stderr).To(ContainSubstring("refused to approve 1 CSR(s) of cluster cli-fleet-03"))
		Expect(csrApproved(ctx, csrs["cli-fleet-03"])).To(BeFalse())
		Expect(hubAcceptsClient(ctx, "cli-fleet-03")).To(BeFalse())
		for _, name := range names {
			if name == "cli-fleet-03" {
				continue
			}
			Expect(res.Stderr).To(ContainSubstring("approved CSR " + csrs[name]))
			Expect(csrApproved(ctx, csrs[name])).To(BeTrue(), name)
			Expect(hubAcceptsClient(ctx, name)).To(BeTrue(), name)
			Expect(res.Stderr).To(ContainSubstring("timed out after --timeout 3s waiting for cluster " + name + ": "))
		}
	})

	It("refuses a CSR that no join identity requested, unless told to skip the check", func(ctx SpecContext) {
		_, c := bootstrapClients(hubInit(ctx).HubToken)
		createManagedCluster(ctx, c, "cli-accept-admin")
		byAdmin := createCSR(ctx, hubCP.Kube, "cli-accept-admin", "cli-accept-admin")

		res := onHub(ctx, "accept", "--clusters", "cli-accept-admin")
		Expect(res.Code).NotTo(Equal(0))
		Expect(res.Stderr).To(ContainSubstring("which is not a join identity"))
		Expect(csrApproved(ctx, byAdmin)).To(BeFalse())
		Expect(hubAcceptsClient(ctx, "cli-accept-admin")).To(BeFalse())

		res = onHub(ctx, "accept", "--clusters", "cli-accept-admin", "--skip-approve-check")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(csrApproved(ctx, byAdmin)).To(BeTrue())
		Expect(hubAcceptsClient(ctx, "cli-accept-admin")).To(BeTrue())
	})

	It("says what is missing for a cluster that has not asked to join", func(ctx SpecContext) {
		res := onHub(ctx, "accept", "--clusters", "cli-nobody")
		Expect(res.Code).NotTo(Equal(0))
		Expect(res.Stderr).To(ContainSubstring("ManagedCluster cli-nobody does not exist on the hub"))

		res = onHub(ctx, "accept", "--clusters", "cli-nobody", "--wait", "--timeout", "1s")
		Expect(res.Code).NotTo(Equal(0))
		Expect(res.Stderr).To(ContainSubstring("Waiting for cluster cli-nobody: ManagedCluster cli-nobody does not exist yet"))
		Expect(res.Stderr).To(ContainSubstring("timed out after --timeout 1s waiting for cluster cli-nobody: ManagedCluster cli-nobody does not exist yet"))
		Expect(res.Stderr).To(ContainSubstring("its agent has not created a CSR yet"))

		res = onHub(ctx, "accept", "--clusters", "Not_A_Name")
		Expect(res.Code).NotTo(Equal(0))
		Expect(res.Stderr).To(ContainSubstring(`--clusters: "Not_A_Name" is not a valid cluster name`))

		res = onHub(ctx, "deny", "--clusters", "cli-nobody")
		Expect(res.Code).NotTo(Equal(0))
		Expect(res.Stderr).To(ContainSubstring("ManagedCluster cli-nobody not found"))
	})

	It("with --wait, accepts a cluster as soon as it asks and waits until it joined", func(ctx SpecContext) {
		done := make(chan cliResult, 1)
		go func() {
			defer GinkgoRecover()
			done <- onHub(ctx, "accept", "--clusters", "cli-accept-wait", "--wait", "--timeout", "1m")
		}()

		By("joining as an agent would")
		kube, c := bootstrapClients(hubInit(ctx).HubToken)
		createManagedCluster(ctx, c, "cli-accept-wait")
		csr := createCSR(ctx, kube, "cli-accept-wait", "cli-accept-wait")
		Eventually(func() bool { return csrApproved(ctx, csr) }).Should(BeTrue())
		Eventually(func() bool { return hubAcceptsClient(ctx, "cli-accept-wait") }).Should(BeTrue())
		Consistently(done, "2s").ShouldNot(Receive(), "the cluster has not joined yet")

		By("reporting the hub's acceptance and the agent's join")
		setConditions(ctx, "cli-accept-wait",
			metav1.Condition{Type: clusterv1.ManagedClusterConditionHubAccepted, Status: metav1.ConditionTrue, Reason: clusterv1.ReasonHubClusterAdminAccepted},
			metav1.Condition{Type: clusterv1.ManagedClusterConditionJoined, Status: metav1.ConditionTrue, Reason: clusterv1.ReasonManagedClusterJoined},
		)
		var res cliResult
		Eventually(done).Should(Receive(&res))
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stderr).To(ContainSubstring("Cluster cli-accept-wait is accepted and joined."))
	})
})

// setConditions sets status conditions of a ManagedCluster, as the hub
// controllers and the agent do.
func setConditions(ctx context.Context, name string, conds ...metav1.Condition) {
	GinkgoHelper()
	Eventually(func() error {
		mc := &clusterv1.ManagedCluster{}
		if err := hubCP.Client.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
			return err
		}
		for _, c := range conds {
			c.Message = "set by the test"
			meta.SetStatusCondition(&mc.Status.Conditions, c)
		}
		return hubCP.Client.Status().Update(ctx, mc)
	}).Should(Succeed())
}
