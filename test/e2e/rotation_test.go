package e2e

import (
	"crypto/x509"
	"encoding/pem"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/agent"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/internal/identity"
	"github.com/flotilla-io/flotilla/test/framework"
)

var _ = Describe("Client certificate rotation of a flotilla-agent process", func() {
	It("renews its certificate through CSRs the hub approves, twice, without falling back to bootstrap or losing the cluster", func(ctx SpecContext) {
		klog.LogToStderr(false)
		klog.SetOutput(GinkgoWriter)
		const cluster = "rotating"

		dir := GinkgoT().TempDir()
		hub, err := framework.StartHubProcess(ctx, *binDir, filepath.Join(dir, "hub"), 2*time.Minute)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { hub.Stop(30 * time.Second) })
		spoke, err := framework.Start(ctx, framework.Spoke)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(spoke.Stop)
		onHub := func(args ...string) cliRun {
			GinkgoHelper()
			return runFlotilla(ctx, append(args, "--kubeconfig", hub.Kubeconfig)...)
		}

		join := joinInfo(onHub("init", "-o", "json"))
		bootstrap := writeBootstrapKubeconfig(hub.Kubeconfig, join.URL, join.Token, filepath.Join(dir, "bootstrap.kubeconfig"))

		By("running flotilla-agent with 10-minute certificates renewed 25 s after they are issued")
		// The kube-apiserver-client signer issues nothing shorter than 10
		// minutes; --renew-before makes the agent rotate long before then.
		agentProc, err := framework.StartProcess(ctx, filepath.Join(*binDir, "flotilla-agent"),
			"--cluster-name", cluster, "--kubeconfig", spoke.AdminKubeconfig, "--bootstrap-kubeconfig", bootstrap,
			"--lease-duration-seconds", leaseSeconds, "--client-cert-expiration", "10m", "--renew-before", "9m35s",
			"--metrics-bind-address", "0", "--health-probe-bind-address", "0")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { agentProc.Stop(30 * time.Second) })
		res := onHub("accept", "--clusters", cluster, "--wait", "--timeout", "2m")
		Expect(res.code).To(Equal(0), res.stderr, agentProc.Tail(20))

		admin := adminClient(hub.Kubeconfig)
		first := storedCertificate(ctx, spoke.Client)
		Expect(first.Subject.CommonName).To(HavePrefix(identity.ClusterGroup(cluster) + ":"))

		By("the agent swaps in a renewed certificate, and then another")
		serials := []string{first.SerialNumber.String()}
		for range 2 {
			Eventually(func() string {
				return storedCertificate(ctx, spoke.Client).SerialNumber.String()
			}, 2*time.Minute, time.Second).ShouldNot(BeElementOf(serials), "the agent should store a renewed certificate; its output:\n%s", agentProc.Tail(30))
			serials = append(serials, storedCertificate(ctx, spoke.Client).SerialNumber.String())
		}
		renewed := storedCertificate(ctx, spoke.Client)
		Expect(renewed.Subject.CommonName).To(Equal(first.Subject.CommonName), "a renewal keeps the agent's identity")

		By("each renewal was asked for with the agent's own certificate, and approved by the hub without an admin")
		csrs := &certificatesv1.CertificateSigningRequestList{}
		Expect(admin.List(ctx, csrs, client.MatchingLabels{clusterv1.ClusterNameLabel: cluster})).To(Succeed())
		var fromBootstrap, fromAgent int
		for _, csr := range csrs.Items {
			switch {
			case strings.HasPrefix(csr.Spec.Username, "system:bootstrap:"):
				fromBootstrap++
			case csr.Spec.Username == first.Subject.CommonName:
				fromAgent++
				Expect(approved(csr)).To(BeTrue(), "renewal CSR %s should be approved: %v", csr.Name, csr.Status.Conditions)
			}
		}
		Expect(fromBootstrap).To(Equal(1), "the agent never fell back to its bootstrap token")
		Expect(fromAgent).To(BeNumerically(">=", 2))

		By("the cluster stays Available and its agent still works with the renewed certificate")
		rotated := time.Now()
		Eventually(func() bool { return leaseRenewedAfter(ctx, admin, cluster, rotated) }, time.Minute).Should(BeTrue())
		Expect(clusterConditions(onHub("get", "clusters", "-o", "json"), clusterv1.ManagedClusterConditionAvailable)).
			To(HaveKeyWithValue(cluster, metav1.ConditionTrue))
		example := filepath.Join("..", "..", "..", "shared", "examples", "manifestwork-hello.yaml")
		res = onHub("create", "work", "hello", "-f", example, "--clusters", cluster, "--wait", "--timeout", "2m")
		Expect(res.code).To(Equal(0), res.stderr, agentProc.Tail(30))
		Expect(spoke.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "hello"}, &appsv1.Deployment{})).To(Succeed())
	})
})

// storedCertificate is the hub client certificate the agent keeps on the spoke.
func storedCertificate(ctx SpecContext, spoke client.Client) *x509.Certificate {
	GinkgoHelper()
	secret := &corev1.Secret{}
	Expect(spoke.Get(ctx, client.ObjectKey{Namespace: agent.DefaultNamespace, Name: agent.HubKubeconfigSecretName}, secret)).To(Succeed())
	block, _ := pem.Decode(secret.Data["tls.crt"])
	Expect(block).NotTo(BeNil(), "tls.crt holds a PEM certificate")
	cert, err := x509.ParseCertificate(block.Bytes)
	Expect(err).NotTo(HaveOccurred())
	return cert
}

func approved(csr certificatesv1.CertificateSigningRequest) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == certificatesv1.CertificateApproved && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// writeBootstrapKubeconfig writes what `flotilla join` would store: the
// hub's CA and URL with the join token.
func writeBootstrapKubeconfig(adminKubeconfig, url, token, path string) string {
	GinkgoHelper()
	Expect(framework.WriteBootstrapKubeconfig(adminKubeconfig, url, token, path)).To(Succeed())
	return path
}
