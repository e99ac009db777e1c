package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/test/framework"
)

// kubectl is the plain kubectl that the proxy's users run.
const kubectl = "/usr/bin/kubectl"

var _ = Describe("Cluster proxy", func() {
	It("lets plain kubectl get and watch a sandbox cluster through the hub with flotilla kubeconfig", func(ctx SpecContext) {
		if _, err := exec.LookPath(kubectl); err != nil {
			Skip("kubectl is not installed at " + kubectl)
		}
		dir, _, onHub := startSandbox(ctx, 1)
		kubeconfig := filepath.Join(GinkgoT().TempDir(), "through-hub.kubeconfig")
		Eventually(func() int { return onHub("kubeconfig", "--cluster", "cluster1", "--output-file", kubeconfig).code }).Should(Equal(0))

		By("kubectl get nodes through the hub lists the sandbox cluster's simulated nodes")
		Eventually(func() string {
			out, _ := exec.CommandContext(ctx, kubectl, "--kubeconfig", kubeconfig, "get", "nodes", "-o", "name").Output()
			return string(out)
		}, "60s", "500ms").Should(ContainSubstring("node/"))

		By("kubectl get -w through the hub sees a ConfigMap created on the cluster")
		var out framework.Buffer
		watchCtx, stop := context.WithCancel(ctx)
		defer stop()
		spoke := devKube(filepath.Join(dir, "cluster1", "admin.kubeconfig"))
		_, err := spoke.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "there-before"}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		w := exec.CommandContext(watchCtx, kubectl, "--kubeconfig", kubeconfig, "get", "configmaps", "-n", "default", "-w", "-o", "name")
		w.Stdout, w.Stderr = &out, GinkgoWriter
		Expect(w.Start()).To(Succeed())
		defer func() { stop(); _ = w.Wait() }()
		// kubectl lists before it watches: once it printed what was
		// there, its watch is open.
		Eventually(func() string { return out.String() }, "30s").Should(ContainSubstring("configmap/there-before"))
		_, err = spoke.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "made-on-the-cluster"}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() string { return out.String() }, "30s").Should(ContainSubstring("configmap/made-on-the-cluster"))

		By("flotilla get clusters -o wide shows cluster1's tunnel open")
		wide := onHub("get", "clusters", "-o", "wide")
		Expect(wide.code).To(Equal(0), wide.stderr)
		// Columns are aligned, and a header may hold a space
		// (KUBERNETES VERSION): read TUNNEL at its header's offset.
		lines := strings.Split(strings.TrimSpace(wide.stdout), "\n")
		at := strings.Index(lines[0], "TUNNEL")
		Expect(at).To(BeNumerically(">=", 0), wide.stdout)
		Expect(lines).To(ContainElement(WithTransform(func(line string) []string {
			if len(line) <= at {
				return nil
			}
			return []string{strings.Fields(line)[0], strings.Fields(line[at:])[0]}
		}, Equal([]string{"cluster1", "True"}))), wide.stdout)
	})
})
