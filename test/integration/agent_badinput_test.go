package integration

import (
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/agent"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
)

var _ = Describe("Agent: bad input", Ordered, func() {
	var env *agentEnv

	BeforeAll(func(ctx SpecContext) {
		env = newAgentEnv(ctx)
	})

	// retrying checks that the agent keeps retrying and says why in one line
	// each time, without a stack trace, and is still running.
	retrying := func(a *runningAgent, why string) {
		GinkgoHelper()
		Eventually(a.logs.count(why)).Should(BeNumerically(">=", 2), "the reason is logged at every retry")
		for _, line := range a.logs.matching(why) {
			Expect(line).NotTo(ContainSubstring("\n"), "one line each")
			Expect(line).NotTo(ContainSubstring("goroutine "), "no stack traces")
		}
		Expect(a.done).NotTo(Receive(), "the agent keeps running")
	}

	It("refuses an invalid cluster name at start, saying why", func(ctx SpecContext) {
		opts := env.options("Edge_1")
		err := agent.Run(ctx, opts)
		Expect(err).To(MatchError(ContainSubstring(`invalid cluster name "Edge_1"`)))
		Expect(err).To(MatchError(ContainSubstring("lower case alphanumeric characters or '-'")))
	})

	DescribeTable("keeps retrying a hub it cannot join, and logs why",
		func(ctx SpecContext, server func() string, ca func() []byte, token func() string, why string) {
			name := newClusterName("agent-bad")
			opts := env.options(name)
			// A kubeconfig file this time, instead of the bootstrap secret.
			opts.BootstrapKubeconfig = filepath.Join(GinkgoT().TempDir(), "bootstrap.kubeconfig")
			Expect(os.WriteFile(opts.BootstrapKubeconfig, bootstrapKubeconfig(server(), ca(), token()), 0o600)).To(Succeed())

			a := startAgent(opts)
			retrying(a, why)
			Expect(a.logs.matching(why)[0]).To(And(ContainSubstring("Cannot join the hub yet; retrying"), ContainSubstring(name)),
				"the line names the cluster")
			err := hubCP.Client.Get(ctx, client.ObjectKey{Name: name}, &clusterv1.ManagedCluster{})
			Expect(apierrors.IsNotFound(err)).To(BeTrue(), "nothing reaches the hub: %v", err)
		},
		Entry("a wrong bootstrap token",
			func() string { return hubCP.URL }, func() []byte { return hubCP.CAData }, func() string { return "abcdef.0123456789abcdef" },
			"rejected the bootstrap credential (401 Unauthorized)"),
		Entry("a wrong CA",
			func() string { return hubCP.URL }, func() []byte { return env.spoke.CAData }, func() string { return env.token },
			"presents a certificate that the CA in the kubeconfig does not verify"),
		Entry("an unreachable hub",
			func() string { return "https://127.0.0.1:1" }, func() []byte { return hubCP.CAData }, func() string { return env.token },
			"is unreachable"),
	)

	It("does not take a cluster name that another cluster holds", func(ctx SpecContext) {
		name := newClusterName("agent-taken")
		deleteClusterAfterSpec(name)
		Expect(hubCP.Client.Create(ctx, &clusterv1.ManagedCluster{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       clusterv1.ManagedClusterSpec{ManagedClusterClientConfigs: []clusterv1.ClientConfig{{URL: "https://elsewhere.example:6443"}}},
		})).To(Succeed())
		opts := env.options(name)
		env.storeBootstrapSecret(ctx, opts.Namespace, bootstrapKubeconfig(hubCP.URL, hubCP.CAData, env.token))

		a := startAgent(opts)
		retrying(a, "belongs to another cluster: it reports API server https://elsewhere.example:6443")
		Expect(clusterCSRs(ctx, name)).To(BeEmpty(), "no CSR for a name held by another cluster")
	})

	It("stops creating CSRs while 10 of its own wait for approval", func(ctx SpecContext) {
		name := newClusterName("agent-pending")
		deleteClusterAfterSpec(name)
		opts := env.options(name)
		opts.AgentID = "patient"
		cn, orgs := agentSubject(name, "patient")
		for range 10 {
			_, csrPEM := newCSR(cn, orgs)
			createClusterCSR(ctx, hubCP.Kube, name, csrPEM)
		}
		env.storeBootstrapSecret(ctx, opts.Namespace, bootstrapKubeconfig(hubCP.URL, hubCP.CAData, env.token))

		a := startAgent(opts)
		retrying(a, "10 CSRs of this agent are waiting for approval")
		csrs := clusterCSRs(ctx, name)
		Expect(csrs).To(HaveLen(10))

		By("asking again once a hub admin denied one")
		csr := csrs[0]
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue, Reason: "Test", Message: "denied in a test",
		})
		_, err := hubCP.Kube.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, &csr, metav1.UpdateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() []certificatesv1.CertificateSigningRequest { return clusterCSRs(ctx, name) }).Should(HaveLen(11))
		Consistently(func() []certificatesv1.CertificateSigningRequest { return clusterCSRs(ctx, name) }, "3s").Should(HaveLen(11),
			"ten pending again: no more")
	})
})
