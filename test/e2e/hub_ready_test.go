package e2e

import (
	"net/http"
	"path/filepath"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/test/framework"
)

// Ready means ready (issue 42): what flotilla-hub says, in its ready line
// and on /readyz, holds for the very next request.
var _ = Describe("flotilla-hub: ready means ready", func() {
	It("has made the cluster sets global and default when it says it is ready", func(ctx SpecContext) {
		hub, err := framework.StartHubProcess(ctx, *binDir, GinkgoT().TempDir(), 2*time.Minute)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { hub.Stop(30 * time.Second) })

		for _, set := range []string{"global", "default"} {
			res := runFlotilla(ctx, "clusterset", "bind", set, "-n", "apps", "--kubeconfig", hub.Kubeconfig)
			Expect(res.code).To(Equal(0), "bind %s right after the ready line: %s", set, res.stderr)
			Expect(res.stdout).To(ContainSubstring("ManagedClusterSet " + set + " bound to namespace apps."))
		}
	})

	It("after a restart, answers /readyz 200 only once ManifestWorks can be written", func(ctx SpecContext) {
		dir := GinkgoT().TempDir()
		port, err := framework.FreePort()
		Expect(err).NotTo(HaveOccurred())
		probePort, err := framework.FreePort()
		Expect(err).NotTo(HaveOccurred())
		readyz := "http://127.0.0.1:" + strconv.Itoa(probePort) + "/readyz"
		probe := []string{"--health-probe-bind-address", "127.0.0.1:" + strconv.Itoa(probePort)}

		hub, err := framework.StartHubProcessOnPort(ctx, *binDir, dir, port, 2*time.Minute, probe...)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { hub.Stop(30 * time.Second) })
		admin := devClient(hub.Kubeconfig)
		Expect(admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "apps"}})).To(Succeed())
		Expect(admin.Create(ctx, readyWork("before"))).To(Succeed())
		// Killed, as a crash or an OOM kill ends it: it has no moment to
		// do anything about its webhook's registration.
		hub.Kill()

		By("starting it again on the same data, and writing a work the moment /readyz says 200")
		again, err := framework.StartProcess(ctx, filepath.Join(*binDir, "flotilla-hub"), append([]string{
			"--data-dir", dir, "--secure-port", strconv.Itoa(port), "--metrics-bind-address", "0",
		}, probe...)...)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { again.Stop(30 * time.Second) })
		Eventually(func() int {
			resp, err := http.Get(readyz)
			if err != nil {
				return 0
			}
			resp.Body.Close()
			return resp.StatusCode
		}, 2*time.Minute, 20*time.Millisecond).Should(Equal(http.StatusOK), again.Tail(20))
		Expect(admin.Create(ctx, readyWork("after"))).To(Succeed(), "the first ManifestWork after /readyz said 200")

		By("writing one the moment it prints that it is ready, with the CLI too")
		Expect(again.WaitForOutput("flotilla-hub is ready", time.Minute)).To(Succeed())
		Expect(admin.Create(ctx, readyWork("after-line"))).To(Succeed())
		res := runFlotilla(ctx, "clusterset", "bind", "global", "-n", "apps", "--kubeconfig", hub.Kubeconfig)
		Expect(res.code).To(Equal(0), res.stderr)
	})
})

// readyWork is a ManifestWork of one ConfigMap in namespace apps.
func readyWork(name string) *workv1.ManifestWork {
	return &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: name},
		Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{
			Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `","namespace":"default"}}`),
		}}}}},
	}
}
