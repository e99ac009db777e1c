package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/test/framework"
)

// afterOutageBound is how soon after the hub is back a new ManifestWork
// must be Applied on the spoke. Normally it takes well under a second and
// the bench measures it (p99 2 s); the bound leaves room for a loaded
// test machine, and lies far below the tens of seconds of a reflector's
// grown backoff, which is what this spec guards against.
const afterOutageBound = 15 * time.Second

// waitRidesOut is the --timeout of a CLI wait started while the hub is
// down: the command must wait that long, not fail at the first refused
// connection.
const waitRidesOut = 20 * time.Second

var _ = Describe("Back after faults", func() {
	It("applies a new work promptly after the hub was SIGKILLed for a minute, and restarts an agent whose token is gone with its certificate", func(ctx SpecContext) {
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
		spoke, err := framework.Start(ctx, framework.Spoke)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(spoke.Stop)

		join := joinInfo(onHub("init", "-o", "json"))
		agent := startJoin(ctx, spoke, join.Token, join.URL, "cluster-o")
		res := onHub("accept", "--clusters", "cluster-o", "--wait", "--timeout", "3m")
		Expect(res.code).To(Equal(0), res.stderr)
		admin := devClient(hub.Kubeconfig)
		csrsBefore := countCSRs(ctx, admin)
		example := sharedExample("manifestwork-hello.yaml")
		res = onHub("create", "work", "hello", "-f", example, "--clusters", "cluster-o", "--wait", "--timeout", "2m")
		Expect(res.code).To(Equal(0), res.stderr)

		By("killing the hub with SIGKILL, and starting it again on the same port and data after 60 s")
		hub.Kill()
		killed := time.Now()

		By("waiting with the CLI while the hub refuses connections: up to --timeout, saying it waits for the hub")
		res = onHub("accept", "--clusters", "cluster-o", "--wait", "--timeout", waitRidesOut.String())
		Expect(res.code).NotTo(Equal(0), "the hub never answered")
		Expect(time.Since(killed)).To(BeNumerically(">=", waitRidesOut), "accept --wait rides out a refusing hub until its --timeout")
		Expect(res.stderr).To(ContainSubstring("Waiting for the hub"))
		Expect(res.stderr).To(ContainSubstring("connection refused"))
		Expect(res.stderr).To(ContainSubstring("timed out after --timeout " + waitRidesOut.String()))

		By("starting a CLI wait during the outage that ends well once the hub is back")
		waiter, err := framework.StartProcess(ctx, filepath.Join(*binDir, "flotilla"),
			"accept", "--clusters", "cluster-o", "--wait", "--timeout", "3m", "--kubeconfig", hub.Kubeconfig)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() {
			if !waiter.Exited() {
				waiter.Kill()
			}
		})
		Expect(waiter.WaitForOutput("Waiting for the hub", time.Minute)).To(Succeed(), waiter.Tail(20))

		// The outage's length is the scenario, not a synchronisation: the
		// agent's watches fail throughout it.
		Consistently(func() bool { return agent.Exited() }, time.Until(killed.Add(60*time.Second)), time.Second).Should(BeFalse(), "the agent outlives the hub's outage")
		hub, err = framework.StartHubProcessOnPort(ctx, *binDir, dir, hub.Port, 2*time.Minute)
		Expect(err).NotTo(HaveOccurred())
		admin = devClient(hub.Kubeconfig)
		code, err := waiter.Wait(time.Minute)
		Expect(err).NotTo(HaveOccurred(), "accept --wait ends once the hub answers:\n%s", waiter.Tail(20))
		Expect(code).To(Equal(0), waiter.Tail(20))
		Expect(waiter.Output()).To(ContainSubstring("Cluster cluster-o is accepted and joined."))

		By("creating a work after the restart: Applied on the spoke within the bound")
		created := time.Now()
		res = onHub("create", "work", "after", "-f", exampleDeploying("hello-after"), "--clusters", "cluster-o")
		Expect(res.code).To(Equal(0), res.stderr)
		Eventually(func(g Gomega) {
			w := &workv1.ManifestWork{}
			g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: "cluster-o", Name: "after"}, w)).To(Succeed())
			g.Expect(meta.FindStatusCondition(w.Status.Conditions, workv1.WorkApplied)).To(HaveField("Status", metav1.ConditionTrue), "%+v", w.Status)
		}, afterOutageBound, 100*time.Millisecond).Should(Succeed(), "the work is Applied within %s of its creation; the agent's output:\n%s", afterOutageBound, agent.Tail(30))
		GinkgoWriter.Printf("ManifestWork created after the hub's restart was Applied %s after its creation\n", time.Since(created).Round(time.Millisecond))

		By("deleting the join token and restarting the agent: it comes back with its certificate")
		tokenID, _, _ := strings.Cut(join.Token, ".")
		Expect(admin.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: bootstrapapi.BootstrapTokenSecretPrefix + tokenID}})).To(Succeed())
		code, err = agent.Stop(30 * time.Second)
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(0), agent.Tail(20))
		restarted := time.Now()
		agent.start(ctx)
		Expect(agent.WaitForOutput("uses them instead", time.Minute)).To(Succeed(), agent.Tail(20))
		Eventually(func() bool { return leaseRenewedAfter(ctx, admin, "cluster-o", restarted) }, time.Minute).Should(BeTrue(), agent.Tail(30))
		Expect(countCSRs(ctx, admin)).To(Equal(csrsBefore), "the agent asked for no new certificate")
		res = onHub("create", "work", "again", "-f", exampleDeploying("hello-again"), "--clusters", "cluster-o", "--wait", "--timeout", "2m")
		Expect(res.code).To(Equal(0), res.stderr)
		Expect(spoke.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "hello-again"}, &appsv1.Deployment{})).To(Succeed())
		mc := &clusterv1.ManagedCluster{}
		Expect(admin.Get(ctx, client.ObjectKey{Name: "cluster-o"}, mc)).To(Succeed())
	})
})

// exampleDeploying writes the shared hello work into a new directory with its
// Deployment renamed to name, so that several works in one cluster each own
// an object of their own: two works that apply one object are a conflict
// the agent reports, not two successes.
func exampleDeploying(name string) string {
	GinkgoHelper()
	work := readExample("manifestwork-hello.yaml")
	manifests, _, err := unstructured.NestedSlice(work.Object, "spec", "workload", "manifests")
	Expect(err).NotTo(HaveOccurred())
	Expect(unstructured.SetNestedField(manifests[0].(map[string]any), name, "metadata", "name")).To(Succeed())
	Expect(unstructured.SetNestedSlice(work.Object, manifests, "spec", "workload", "manifests")).To(Succeed())
	data, err := yaml.Marshal(work.Object)
	Expect(err).NotTo(HaveOccurred())
	p := filepath.Join(GinkgoT().TempDir(), name+".yaml")
	Expect(os.WriteFile(p, data, 0o600)).To(Succeed())
	return p
}

// sharedExample is framework.SharedExample for a spec.
func sharedExample(name string) string {
	GinkgoHelper()
	p, err := framework.SharedExample(name)
	Expect(err).NotTo(HaveOccurred())
	return p
}
