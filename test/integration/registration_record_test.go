package integration

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/internal/identity"
)

// joinAs asks, with join token token's credentials, for agent's certificate
// of new cluster name, as the agent's join does: the ManagedCluster names
// the agent (identity.AgentIDAnnotation), then a CSR for it. It returns
// the CSR's name and the key.
func joinAs(ctx SpecContext, token, name, agent string) (csr string, keyPEM []byte) {
	GinkgoHelper()
	_, c := bootstrapClients(token)
	mc := newManagedCluster(name)
	mc.Annotations = map[string]string{identity.AgentIDAnnotation: agent}
	Expect(c.Create(ctx, mc)).To(Succeed())
	j := newJoiner(bootstrapKubeconfig(hubCP.URL, hubCP.CAData, token))
	cn, orgs := agentSubject(name, agent)
	keyPEM, csrPEM := newCSR(cn, orgs)
	return createClusterCSR(ctx, kubernetes.NewForConfigOrDie(j.cfg), name, csrPEM), keyPEM
}

// markJoined writes Joined on cluster name's status as the hub admin: what
// the cluster's agent reports once its certificate is issued, written here
// before the approval so that the hub's CSR approver reads it whatever its
// speed, as it does in a fleet accepted at once, whose join CSRs queue at
// the approver while their agents, issued, report Joined.
func markJoined(ctx SpecContext, name string) {
	GinkgoHelper()
	Eventually(func() error {
		mc := getCluster(ctx, name)
		before := mc.DeepCopy()
		meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{
			Type: clusterv1.ManagedClusterConditionJoined, Status: metav1.ConditionTrue, Reason: clusterv1.ReasonManagedClusterJoined, Message: "joined in a test",
		})
		return hubCP.Client.Status().Patch(ctx, mc, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	}).Should(Succeed())
}

var _ = Describe("The accepted agent of a joining cluster", func() {
	It("is recorded when the agent reported Joined before the hub looked at its approved join CSR, and not for a cluster another agent joined", func(ctx SpecContext) {
		token := hubInit(ctx).HubToken
		racer, legacy := newClusterName("record-racer"), newClusterName("record-legacy")
		deleteClusterAfterSpec(racer)
		deleteClusterAfterSpec(legacy)

		By("joining a cluster whose agent reports Joined before the hub's approver gets to its CSR")
		csr, key := joinAs(ctx, token, racer, "racer-agent")
		markJoined(ctx, racer)
		setAccepted(ctx, racer, true)
		approveAsAdmin(ctx, csr)
		agent := issued(ctx, csr, key)
		Eventually(func() map[string]string { return getCluster(ctx, racer).Annotations }).
			Should(HaveKeyWithValue(identity.AcceptedAgentAnnotation, "racer-agent"), "the joining agent is the cluster's accepted agent")
		Eventually(bindingSubjects(ctx, racer)).Should(ConsistOf(rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: identity.AgentUser(racer, "racer-agent")}),
			"the hub grants the cluster's access to its agent by name")
		Eventually(readWorks(ctx, agent, racer)).Should(Succeed())

		By("approving a join CSR of another agent for a cluster an agent joined before the hub recorded agents")
		_, c := bootstrapClients(token)
		mc := newManagedCluster(legacy)
		mc.Annotations = map[string]string{identity.AgentIDAnnotation: "old-agent"}
		Expect(c.Create(ctx, mc)).To(Succeed())
		markJoined(ctx, legacy)
		setAccepted(ctx, legacy, true)
		newcomer := newJoiner(bootstrapKubeconfig(hubCP.URL, hubCP.CAData, token))
		newcomerCSR, newcomerKey := newcomer.ask(ctx, legacy, "newcomer")
		approveAsAdmin(ctx, newcomerCSR)
		issued(ctx, newcomerCSR, newcomerKey)
		Consistently(func() map[string]string { return getCluster(ctx, legacy).Annotations }).WithTimeout(3*time.Second).
			ShouldNot(HaveKey(identity.AcceptedAgentAnnotation), "an approval never names a cluster's agent in place of the one that joined it")
	})
})
