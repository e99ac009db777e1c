package e2e

import (
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/test/framework"
)

var _ = Describe("flotilla-hub", func() {
	It("serves the OCM APIs, accepts the example ManifestWork, shuts down cleanly and keeps its state", func(ctx SpecContext) {
		dir := GinkgoT().TempDir()
		hub, err := framework.StartHubProcess(ctx, *binDir, dir, 2*time.Minute)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { hub.Stop(30 * time.Second) })

		c := adminClient(hub.Kubeconfig)
		Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "cluster1"}})).To(Succeed())
		work := readExample("manifestwork-hello.yaml")
		Expect(c.Create(ctx, work)).To(Succeed())

		By("stopping on SIGTERM with exit code 0")
		code, err := hub.Stop(60 * time.Second)
		Expect(err).NotTo(HaveOccurred(), hub.Tail(20))
		Expect(code).To(Equal(0), hub.Tail(20))

		By("starting again on the same data directory, with the work still there")
		hub, err = framework.StartHubProcess(ctx, *binDir, dir, 2*time.Minute)
		Expect(err).NotTo(HaveOccurred())
		got := work.DeepCopy()
		Expect(adminClient(hub.Kubeconfig).Get(ctx, client.ObjectKeyFromObject(work), got)).To(Succeed())
		Expect(got.Object["spec"]).To(Equal(work.Object["spec"]))
	})

	It("refuses a data directory already in use", func(ctx SpecContext) {
		dir := GinkgoT().TempDir()
		hub, err := framework.StartHubProcess(ctx, *binDir, dir, 2*time.Minute)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { hub.Stop(30 * time.Second) })
		second := runHub(ctx, "--data-dir", dir, "--secure-port", "0")
		Expect(second.code).To(Equal(1))
		Expect(second.output).To(ContainSubstring("in use by another hub"))
	})

	DescribeTable("rejects bad input with one clear message",
		func(ctx SpecContext, args func() []string, want string) {
			r := runHub(ctx, args()...)
			Expect(r.code).To(Equal(1), r.output)
			Expect(r.output).To(ContainSubstring(want))
		},
		Entry("contradictory flags", func() []string {
			return []string{"--kubeconfig", "/dev/null", "--etcd-servers", "http://127.0.0.1:2379"}
		}, "--etcd-servers configures the embedded control plane"),
		Entry("the embedded API server's watch cache for a hub on an existing cluster", func() []string {
			return []string{"--kubeconfig", "/dev/null", "--watch-cache-manifestworks"}
		}, "--watch-cache-manifestworks configures the embedded control plane"),
		Entry("etcd TLS files for plain http etcd servers", func() []string {
			return []string{"--data-dir", GinkgoT().TempDir(), "--etcd-servers", "http://127.0.0.1:2379", "--etcd-cafile", "/dev/null"}
		}, "are for https:// etcd servers"),
		Entry("an etcd client certificate without its key", func() []string {
			return []string{"--data-dir", GinkgoT().TempDir(), "--etcd-servers", "https://127.0.0.1:2379", "--etcd-certfile", "/dev/null"}
		}, "--etcd-certfile and --etcd-keyfile go together"),
		Entry("a renew deadline an etcd election outlasts, on an external etcd", func() []string {
			return []string{"--data-dir", GinkgoT().TempDir(), "--etcd-servers", "https://127.0.0.1:2379",
				"--leader-elect-lease-duration", "6s", "--leader-elect-renew-deadline", "4s", "--leader-elect-retry-period", "1s"}
		}, "is too short for a hub on an external etcd cluster"),
		Entry("a port in use", func() []string {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(l.Close)
			return []string{"--data-dir", GinkgoT().TempDir(), "--secure-port", strconv.Itoa(l.Addr().(*net.TCPAddr).Port)}
		}, "choose another --secure-port"),
		Entry("an unwritable data directory", func() []string {
			file := filepath.Join(GinkgoT().TempDir(), "file")
			Expect(os.WriteFile(file, nil, 0o600)).To(Succeed())
			return []string{"--data-dir", filepath.Join(file, "hub")}
		}, "cannot create data directory"),
		Entry("a stray argument", func() []string { return []string{"serve"} }, "unknown command"),
		Entry("a webhook certificate without the URL to reach it", func() []string {
			return []string{"--kubeconfig", "/dev/null", "--webhook-cert-dir", GinkgoT().TempDir()}
		}, "--webhook-cert-dir and --webhook-advertise-url (or --webhook-service) go together"),
		Entry("a webhook port in use", func() []string {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(l.Close)
			port, err := framework.FreePort()
			Expect(err).NotTo(HaveOccurred())
			return []string{"--data-dir", GinkgoT().TempDir(), "--secure-port", strconv.Itoa(port), "--webhook-port", strconv.Itoa(l.Addr().(*net.TCPAddr).Port)}
		}, "choose another --webhook-port"),
	)
})

type result struct {
	code   int
	output string
}

// runHub runs flotilla-hub to completion; it is for invocations that fail.
func runHub(ctx SpecContext, args ...string) result {
	GinkgoHelper()
	p, err := framework.StartProcess(ctx, filepath.Join(*binDir, "flotilla-hub"), append(args, "--metrics-bind-address", "0", "--health-probe-bind-address", "0")...)
	Expect(err).NotTo(HaveOccurred())
	code, err := p.Wait(time.Minute)
	Expect(err).NotTo(HaveOccurred(), p.Tail(20))
	return result{code: code, output: p.Output()}
}

func adminClient(kubeconfig string) client.Client {
	GinkgoHelper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	c, err := client.New(cfg, client.Options{})
	Expect(err).NotTo(HaveOccurred())
	return c
}

func readExample(name string) *unstructured.Unstructured {
	GinkgoHelper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "examples", name))
	Expect(err).NotTo(HaveOccurred())
	u := &unstructured.Unstructured{}
	Expect(yaml.Unmarshal(data, &u.Object)).To(Succeed())
	return u
}

var _ = Describe("flotilla-hub against an existing cluster", func() {
	It("serves health and metrics endpoints and elects one leader among several processes", func(ctx SpecContext) {
		embedded, err := framework.StartHubProcess(ctx, *binDir, GinkgoT().TempDir(), 2*time.Minute, "--leader-elect=false")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { embedded.Stop(30 * time.Second) })

		first, probe, metrics := startAttachedHub(ctx, embedded.Kubeconfig)
		DeferCleanup(func() { first.Stop(30 * time.Second) })
		Expect(first.WaitForOutput("flotilla-hub is ready", time.Minute)).To(Succeed())
		for _, path := range []string{"/healthz", "/readyz"} {
			Expect(httpGet("http://"+probe+path)).To(Equal("ok"), path)
		}
		Expect(httpGet("http://" + metrics + "/metrics")).To(ContainSubstring("controller_runtime_"))

		second, _, _ := startAttachedHub(ctx, embedded.Kubeconfig)
		DeferCleanup(func() { second.Stop(30 * time.Second) })
		Expect(second.WaitForOutput("standing by", time.Minute)).To(Succeed())
		Expect(second.Output()).NotTo(ContainSubstring("flotilla-hub is ready"))

		By("handing over when the leader stops")
		code, err := first.Stop(time.Minute)
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(0), first.Tail(20))
		Expect(second.WaitForOutput("flotilla-hub is ready", time.Minute)).To(Succeed())
	})
})

// startAttachedHub starts flotilla-hub with --kubeconfig and its own probe
// and metrics ports; it returns the process and the probe and metrics addresses.
func startAttachedHub(ctx SpecContext, kubeconfig string) (*framework.Process, string, string) {
	GinkgoHelper()
	probePort, err := framework.FreePort()
	Expect(err).NotTo(HaveOccurred())
	metricsPort, err := framework.FreePort()
	Expect(err).NotTo(HaveOccurred())
	probe := "127.0.0.1:" + strconv.Itoa(probePort)
	metrics := "127.0.0.1:" + strconv.Itoa(metricsPort)
	p, err := framework.StartProcess(ctx, filepath.Join(*binDir, "flotilla-hub"),
		"--kubeconfig", kubeconfig, "--health-probe-bind-address", probe, "--metrics-bind-address", metrics)
	Expect(err).NotTo(HaveOccurred())
	return p, probe, metrics
}

func httpGet(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return string(body), err
}
