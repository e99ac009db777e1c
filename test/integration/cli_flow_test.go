package integration

import (
	"context"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/agent"
	"github.com/flotilla-io/flotilla/test/framework"
)

var _ = Describe("CLI join --run", func() {
	It("joins a cluster the way the quick start says: init, join --run, accept --wait", func(ctx SpecContext) {
		spoke, err := framework.Start(ctx, framework.Spoke)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(spoke.Stop)
		token := hubInit(ctx)

		agentCtx, stopAgent := context.WithCancel(context.WithoutCancel(ctx))
		agentDone := make(chan cliResult, 1)
		go func() {
			defer GinkgoRecover()
			agentDone <- flotilla(agentCtx, "join", "--kubeconfig", spoke.AdminKubeconfig, "--run",
				"--hub-token", token.HubToken, "--hub-apiserver", token.HubAPIServer, "--cluster-name", "cli-flow")
		}()
		DeferCleanup(func() {
			stopAgent()
			var res cliResult
			Eventually(agentDone).Should(Receive(&res))
			Expect(res.Code).To(Equal(0), "an interrupted foreground agent exits cleanly: %s", res.Stderr)
			Expect(res.Stdout).To(ContainSubstring("flotilla accept --clusters cli-flow"))
		})

		res := onHub(ctx, "accept", "--clusters", "cli-flow", "--wait", "--timeout", "2m")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stderr).To(ContainSubstring("approved CSR cli-flow-"))
		Expect(res.Stderr).To(ContainSubstring("Cluster cli-flow is accepted and joined."))

		creds := &corev1.Secret{}
		Expect(spoke.Client.Get(ctx, client.ObjectKey{Namespace: agent.DefaultNamespace, Name: agent.HubKubeconfigSecretName}, creds)).To(Succeed())
		Expect(string(creds.Data["cluster-name"])).To(Equal("cli-flow"))

		res = onHub(ctx, "get", "clusters", "cli-flow")
		Expect(res.Code).To(Equal(0), res.Stderr)
		lines := strings.Split(strings.TrimSpace(res.Stdout), "\n")
		Expect(lines).To(HaveLen(2))
		Expect(strings.Fields(lines[1])[:3]).To(Equal([]string{"cli-flow", "True", "True"}))
	})
})
