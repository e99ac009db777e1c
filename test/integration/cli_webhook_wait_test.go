package integration

import (
	"net"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/cli"
	"github.com/flotilla-io/flotilla/test/framework"
)

// The hub's API server serves a moment before its admission webhook, as
// after a restart (issue 42): the CLI's writes wait for it within their
// --timeout. A webhook configuration of this spec's namespace only, at an
// address where nothing listens, stands for a webhook not served yet.
var _ = Describe("CLI: writes wait for an admission webhook the API server cannot call", func() {
	It("creates a work once the webhook answers, and says after --timeout that it could not", func(ctx SpecContext) {
		c := newAcceptedCluster(ctx, "cww")
		file := writeSpecFile("app.yaml", twoManifests)
		unreachable := unreachableWebhook(ctx, c)

		By("failing after --timeout, saying what it waited for")
		res := onHub(ctx, "create", "work", "app", "-f", file, "--clusters", c, "--timeout", "2s")
		Expect(res.Code).To(Equal(1))
		Expect(res.Stderr).To(ContainSubstring("to reach its admission webhook: "))
		Expect(res.Stderr).To(ContainSubstring("timed out after --timeout 2s waiting for"))
		Expect(res.Stderr).To(ContainSubstring("failed calling webhook"))

		By("waiting while the webhook cannot be called, and creating the work once it can")
		var out, errOut framework.Buffer
		done := make(chan int, 1)
		go func() {
			defer GinkgoRecover()
			done <- cli.Run(ctx, cli.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
				[]string{"create", "work", "app", "-f", file, "--clusters", c, "--timeout", "60s", "--kubeconfig", hubCP.AdminKubeconfig})
		}()
		Eventually(errOut.String).Should(ContainSubstring("to reach its admission webhook: "), "the CLI says that it waits")
		Expect(hubCP.Client.Delete(ctx, unreachable)).To(Succeed())
		var code int
		Eventually(done, "60s").Should(Receive(&code))
		specLog.Printf("stdout:\n%s\nstderr:\n%s\n", out.String(), errOut.String())
		Expect(code).To(Equal(0), errOut.String())
		Expect(out.String()).To(ContainSubstring("ManifestWork app created in cluster " + c))
		Expect(exists(ctx, &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: c, Name: "app"}})()).To(BeTrue())
	})
})

// unreachableWebhook configures a webhook for the ManifestWorks of
// namespace ns at a loopback port where nothing listens, and waits until
// the API server calls it.
func unreachableWebhook(ctx SpecContext, ns string) *admissionregistrationv1.ValidatingWebhookConfiguration {
	GinkgoHelper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	port := l.Addr().(*net.TCPAddr).Port
	Expect(l.Close()).To(Succeed())
	name := "test-unreachable." + ns + ".flotilla.io"
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:         name,
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:" + strconv.Itoa(port) + "/validate"), CABundle: hubCP.CAData},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{workv1.GroupName}, APIVersions: []string{"*"}, Resources: []string{"manifestworks"}},
			}},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}},
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
	Expect(hubCP.Client.Create(ctx, vwc)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(hubCP.Client.Delete(ctx, vwc))).To(Succeed()) })
	// The API server reads webhook configurations from an informer.
	probe := newWork(ns, "probe", namespaceManifest("probe"))
	Eventually(func() error { return hubCP.Client.Create(ctx, probe.DeepCopy(), client.DryRunAll) }).
		Should(MatchError(ContainSubstring("failed calling webhook")))
	return vwc
}
