package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/hub/work"
	"github.com/flotilla-io/flotilla/test/framework"
)

// leaseSeconds is the agents' lease: the hub marks a silent cluster
// Unknown after 5 × leaseSeconds.
const leaseSeconds = "2"

// cliRun is what one run of bin/flotilla did.
type cliRun struct {
	code           int
	stdout, stderr string
}

// hubJoin is what `flotilla init -o json` prints: how clusters join.
type hubJoin struct {
	Token string `json:"hub-token"`
	URL   string `json:"hub-apiserver"`
}

// joinInfo checks that a run of `flotilla init -o json` succeeded and
// returns what it printed.
func joinInfo(res cliRun) hubJoin {
	GinkgoHelper()
	Expect(res.code).To(Equal(0), res.stderr)
	var join hubJoin
	Expect(json.Unmarshal([]byte(res.stdout), &join)).To(Succeed())
	return join
}

// runFlotilla runs bin/flotilla to completion, keeping stdout (results)
// apart from stderr (progress and errors), as a script would.
func runFlotilla(ctx context.Context, args ...string) cliRun {
	GinkgoHelper()
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, filepath.Join(*binDir, "flotilla"), args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		Fail("run flotilla: " + err.Error())
	}
	r := cliRun{code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errOut.String()}
	GinkgoWriter.Printf("$ flotilla %s\n%s%s(exit %d)\n", strings.Join(args, " "), r.stdout, r.stderr, r.code)
	return r
}

// joinedAgent is `flotilla join --run` of one cluster, in the background.
type joinedAgent struct {
	*framework.Process
	args []string
}

// startJoin runs `flotilla join --run` for cluster name on spoke.
func startJoin(ctx context.Context, spoke *framework.ControlPlane, token, hubURL, name string) *joinedAgent {
	GinkgoHelper()
	a := &joinedAgent{args: []string{"join", "--run", "--kubeconfig", spoke.AdminKubeconfig,
		"--hub-token", token, "--hub-apiserver", hubURL, "--cluster-name", name, "--lease-duration-seconds", leaseSeconds}}
	a.start(ctx)
	DeferCleanup(func() {
		if a.Exited() {
			return
		}
		code, err := a.Stop(30 * time.Second)
		Expect(err).NotTo(HaveOccurred(), a.Tail(20))
		Expect(code).To(Equal(0), "an interrupted foreground agent exits cleanly:\n%s", a.Tail(20))
	})
	return a
}

func (a *joinedAgent) start(ctx context.Context) {
	GinkgoHelper()
	// The spec's context ends before DeferCleanup runs, and would kill the
	// agent before it could show that it stops cleanly.
	p, err := framework.StartProcess(context.WithoutCancel(ctx), filepath.Join(*binDir, "flotilla"), a.args...)
	Expect(err).NotTo(HaveOccurred())
	a.Process = p
	Expect(p.WaitForOutput("Running the agent of cluster", time.Minute)).To(Succeed())
}

var _ = Describe("Registration and work through the CLI", func() {
	It("joins two clusters, delivers a ManifestWork, notices a dead agent, and survives a hub restart without a new accept", func(ctx SpecContext) {
		// The spokes' API servers run in this process and log a great deal.
		klog.LogToStderr(false)
		klog.SetOutput(GinkgoWriter)

		dir := GinkgoT().TempDir()
		hub, err := framework.StartHubProcess(ctx, *binDir, dir, 2*time.Minute)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { hub.Stop(30 * time.Second) })
		onHub := func(args ...string) cliRun {
			GinkgoHelper()
			return runFlotilla(ctx, append(args, "--kubeconfig", hub.Kubeconfig)...)
		}
		spokes := map[string]*framework.ControlPlane{}
		for _, name := range []string{"cluster-a", "cluster-b"} {
			spoke, err := framework.Start(ctx, framework.Spoke)
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(spoke.Stop)
			spokes[name] = spoke
		}

		By("init, join --run on both clusters, accept --wait")
		join := joinInfo(onHub("init", "-o", "json"))
		agents := map[string]*joinedAgent{}
		for name, spoke := range spokes {
			agents[name] = startJoin(ctx, spoke, join.Token, join.URL, name)
		}
		res := onHub("accept", "--clusters", "cluster-a,cluster-b", "--wait", "--timeout", "3m")
		Expect(res.code).To(Equal(0), res.stderr)
		Expect(res.stderr).To(ContainSubstring("Cluster cluster-a is accepted and joined."))
		Expect(res.stderr).To(ContainSubstring("Cluster cluster-b is accepted and joined."))
		available := func() map[string]metav1.ConditionStatus {
			GinkgoHelper()
			return clusterConditions(onHub("get", "clusters", "-o", "json"), clusterv1.ManagedClusterConditionAvailable)
		}
		Eventually(available).Should(Equal(map[string]metav1.ConditionStatus{"cluster-a": metav1.ConditionTrue, "cluster-b": metav1.ConditionTrue}))
		admin := adminClient(hub.Kubeconfig)
		csrsBefore := countCSRs(ctx, admin)

		By("creating a work from the example ManifestWork: the agent of cluster-a applies it")
		example := filepath.Join("..", "..", "..", "shared", "examples", "manifestwork-hello.yaml")
		res = onHub("create", "work", "hello", "-f", example, "--clusters", "cluster-a")
		Expect(res.code).To(Equal(0), res.stderr)
		Expect(res.stdout).To(Equal("ManifestWork hello created in cluster cluster-a (1 manifest)\n"))
		hello := client.ObjectKey{Namespace: "default", Name: "hello"}
		Eventually(func() error { return spokes["cluster-a"].Client.Get(ctx, hello, &appsv1.Deployment{}) }, 2*time.Minute).
			Should(Succeed(), "the work agent of cluster-a should apply the Deployment; its output:\n%s", agents["cluster-a"].Tail(30))
		Eventually(func() string { return onHub("get", "works", "--cluster", "cluster-a").stdout }).Should(And(
			MatchRegexp(`(?m)^hello\s+True\s+True\s+`),
			MatchRegexp(`(?m)^  Deployment default/hello\s+True\s+True\s+`),
		))
		Expect(spokes["cluster-b"].Client.Get(ctx, hello, &appsv1.Deployment{})).To(Satisfy(apierrors.IsNotFound))

		By("deleting the work: the agent removes the Deployment")
		res = onHub("delete", "work", "hello", "--cluster", "cluster-a", "--wait", "--timeout", "2m")
		Expect(res.code).To(Equal(0), res.stderr)
		Expect(res.stdout).To(Equal("ManifestWork hello of cluster cluster-a is deleted, with what it applied.\n"))
		Eventually(func() error { return spokes["cluster-a"].Client.Get(ctx, hello, &appsv1.Deployment{}) }).Should(Satisfy(apierrors.IsNotFound))
		res = onHub("get", "works", "--cluster", "cluster-a")
		Expect(res.code).To(Equal(0), res.stderr)
		Expect(res.stdout).To(BeEmpty())

		By("killing the agent of cluster-a: the hub marks it Unknown after 5 lease durations")
		agents["cluster-a"].Kill()
		Eventually(available, time.Minute).Should(Equal(map[string]metav1.ConditionStatus{"cluster-a": metav1.ConditionUnknown, "cluster-b": metav1.ConditionTrue}))

		By("starting it again: it is Available again with its stored credentials")
		agents["cluster-a"].start(ctx)
		Eventually(available, time.Minute).Should(Equal(map[string]metav1.ConditionStatus{"cluster-a": metav1.ConditionTrue, "cluster-b": metav1.ConditionTrue}))
		Expect(countCSRs(ctx, admin)).To(Equal(csrsBefore), "a restarted agent needs no new certificate")

		By("restarting the hub on the same port and data: the agents come back without a new accept")
		code, err := hub.Stop(time.Minute)
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(0), hub.Tail(20))
		restarted := metav1.Now()
		hub, err = framework.StartHubProcessOnPort(ctx, *binDir, dir, hub.Port, 2*time.Minute)
		Expect(err).NotTo(HaveOccurred())
		admin = adminClient(hub.Kubeconfig)
		for _, name := range []string{"cluster-a", "cluster-b"} {
			Eventually(func() bool { return leaseRenewedAfter(ctx, admin, name, restarted.Time) }, 2*time.Minute).Should(BeTrue(), "the agent of %s renews its lease on the restarted hub", name)
		}
		Eventually(available, time.Minute).Should(Equal(map[string]metav1.ConditionStatus{"cluster-a": metav1.ConditionTrue, "cluster-b": metav1.ConditionTrue}))
		Expect(countCSRs(ctx, admin)).To(Equal(csrsBefore), "no agent asked to join again")

		By("delivering a work to cluster-b through the restarted hub")
		res = onHub("create", "work", "hello", "-f", example, "--clusters", "cluster-b")
		Expect(res.code).To(Equal(0), res.stderr)
		Eventually(func() error { return spokes["cluster-b"].Client.Get(ctx, hello, &appsv1.Deployment{}) }, 2*time.Minute).
			Should(Succeed(), "the work agent of cluster-b should apply the Deployment; its output:\n%s", agents["cluster-b"].Tail(30))
	})
})

// clusterConditions reads `get clusters -o json` output: the status of
// condition t of each cluster.
func clusterConditions(res cliRun, t string) map[string]metav1.ConditionStatus {
	GinkgoHelper()
	Expect(res.code).To(Equal(0), res.stderr)
	list := clusterv1.ManagedClusterList{}
	Expect(json.Unmarshal([]byte(res.stdout), &list)).To(Succeed())
	out := map[string]metav1.ConditionStatus{}
	for _, mc := range list.Items {
		out[mc.Name] = metav1.ConditionUnknown
		if c := meta.FindStatusCondition(mc.Status.Conditions, t); c != nil {
			out[mc.Name] = c.Status
		}
	}
	return out
}

// countCSRs counts the hub's CSRs labelled with a cluster name.
func countCSRs(ctx context.Context, c client.Client) int {
	GinkgoHelper()
	list := &certificatesv1.CertificateSigningRequestList{}
	Expect(c.List(ctx, list, client.HasLabels{clusterv1.ClusterNameLabel})).To(Succeed())
	return len(list.Items)
}

// leaseRenewedAfter says whether the agent of cluster renewed its lease after t.
func leaseRenewedAfter(ctx context.Context, c client.Client, cluster string, t time.Time) bool {
	GinkgoHelper()
	lease := &coordinationv1.Lease{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: cluster, Name: "managed-cluster-lease"}, lease); err != nil {
		return false
	}
	return lease.Spec.RenewTime != nil && lease.Spec.RenewTime.After(t)
}

var _ = Describe("ManifestWork admission from a hub attached with --kubeconfig", func() {
	It("serves the webhook with the given certificate and URL, and fails closed once no hub serves it", func(ctx SpecContext) {
		dir := GinkgoT().TempDir()
		embedded, err := framework.StartHubProcess(ctx, *binDir, dir, 2*time.Minute, "--leader-elect=false")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { embedded.Stop(30 * time.Second) })

		By("giving the attached hub a certificate from the hub's CA, as an operator would")
		certDir := GinkgoT().TempDir()
		for src, dst := range map[string]string{"pki/webhook/tls.crt": "tls.crt", "pki/webhook/tls.key": "tls.key", "pki/ca.crt": "ca.crt"} {
			data, err := os.ReadFile(filepath.Join(dir, src))
			Expect(err).NotTo(HaveOccurred())
			Expect(os.WriteFile(filepath.Join(certDir, dst), data, 0o600)).To(Succeed())
		}
		port, err := framework.FreePort()
		Expect(err).NotTo(HaveOccurred())
		url := "https://127.0.0.1:" + strconv.Itoa(port)
		attached, err := framework.StartProcess(ctx, filepath.Join(*binDir, "flotilla-hub"), "--kubeconfig", embedded.Kubeconfig,
			"--webhook-cert-dir", certDir, "--webhook-advertise-url", url, "--webhook-port", strconv.Itoa(port),
			"--metrics-bind-address", "0", "--health-probe-bind-address", "0")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { attached.Stop(30 * time.Second) })
		Expect(attached.WaitForOutput("flotilla-hub is ready", time.Minute)).To(Succeed())

		c := adminClient(embedded.Kubeconfig)
		vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		Expect(c.Get(ctx, client.ObjectKey{Name: work.WebhookName}, vwc)).To(Succeed())
		Expect(*vwc.Webhooks[0].ClientConfig.URL).To(Equal(url + work.WebhookPath))

		Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "cluster1"}})).To(Succeed())
		nameless := readExample("manifestwork-hello.yaml")
		Expect(unstructured.SetNestedSlice(nameless.Object, []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"namespace": "default"}}}, "spec", "workload", "manifests")).To(Succeed())
		Expect(c.Create(ctx, nameless)).To(MatchError(ContainSubstring("spec.workload.manifests[0] (ConfigMap in namespace default) has no metadata.name")))
		Expect(c.Create(ctx, readExample("manifestwork-hello.yaml"))).To(Succeed())

		By("refusing ManifestWork writes while no hub serves the webhook")
		code, err := attached.Stop(time.Minute)
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(0), attached.Tail(20))
		other := readExample("manifestwork-hello.yaml")
		other.SetName("other")
		Expect(c.Create(ctx, other)).To(MatchError(ContainSubstring(`failed calling webhook "` + work.WebhookName + `"`)))
	})
})
