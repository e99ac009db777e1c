package e2e

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/agent"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/test/framework"
)

// runHubCommand runs a flotilla-hub subcommand to completion.
func runHubCommand(ctx context.Context, args ...string) cliRun {
	GinkgoHelper()
	cmd := exec.CommandContext(ctx, filepath.Join(*binDir, "flotilla-hub"), args...)
	out, err := cmd.CombinedOutput()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		Fail("run flotilla-hub: " + err.Error())
	}
	GinkgoWriter.Printf("$ flotilla-hub %v\n%s(exit %d)\n", args, out, cmd.ProcessState.ExitCode())
	return cliRun{code: cmd.ProcessState.ExitCode(), stderr: string(out)}
}

// startAgent runs flotilla-agent for cluster name on spoke, joining with a
// bootstrap kubeconfig file, with the given extra flags.
func startAgent(ctx context.Context, spoke *framework.ControlPlane, bootstrapKubeconfig, name string, extra ...string) *framework.Process {
	GinkgoHelper()
	args := append([]string{"--kubeconfig", spoke.AdminKubeconfig, "--bootstrap-kubeconfig", bootstrapKubeconfig, "--cluster-name", name,
		"--lease-duration-seconds", leaseSeconds, "--metrics-bind-address", "0", "--health-probe-bind-address", "0"}, extra...)
	p, err := framework.StartProcess(context.WithoutCancel(ctx), filepath.Join(*binDir, "flotilla-agent"), args...)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { p.Stop(30 * time.Second) })
	return p
}

var _ = Describe("Hub backup and restore", Label("ha"), func() {
	It("restores a hub from an online snapshot: the agent comes back with its certificate, kept objects keep their UIDs, a later work's objects are removed", func(ctx SpecContext) {
		klog.LogToStderr(false)
		klog.SetOutput(GinkgoWriter)
		const cluster = "cluster-r"

		dir := filepath.Join(GinkgoT().TempDir(), "hub")
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
		Expect(spoke.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: agent.DefaultNamespace}})).To(Succeed())

		By("joining a cluster whose agent removes the objects of vanished works after 5 s")
		join := joinInfo(onHub("init", "-o", "json"))
		bootstrap := filepath.Join(GinkgoT().TempDir(), "bootstrap.kubeconfig")
		Expect(framework.WriteBootstrapKubeconfig(hub.Kubeconfig, join.URL, join.Token, bootstrap)).To(Succeed())
		agentProc := startAgent(ctx, spoke, bootstrap, cluster, "--appliedmanifestwork-eviction-grace-period", "5s")
		res := onHub("accept", "--clusters", cluster, "--wait", "--timeout", "3m")
		Expect(res.code).To(Equal(0), res.stderr, agentProc.Tail(30))
		c := devClient(hub.Kubeconfig)
		Expect(c.Create(ctx, configMapWork(cluster, "kept", "1"))).To(Succeed())
		Eventually(func() bool { return workApplied(ctx, c, cluster, "kept") }, 2*time.Minute).Should(BeTrue(), agentProc.Tail(30))
		kept := &corev1.ConfigMap{}
		Expect(spoke.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "kept"}, kept)).To(Succeed())
		csrsBefore := countCSRs(ctx, c)

		By("taking a snapshot while the hub runs, then creating another work")
		archive := filepath.Join(GinkgoT().TempDir(), "hub.tar.gz")
		res = runHubCommand(ctx, "snapshot", "save", archive, "--data-dir", dir)
		Expect(res.code).To(Equal(0), res.stderr)
		Expect(res.stderr).To(ContainSubstring("Snapshot of " + dir + " written to " + archive))
		Expect(c.Create(ctx, configMapWork(cluster, "late", "1"))).To(Succeed())
		Eventually(func() bool { return workApplied(ctx, c, cluster, "late") }, 2*time.Minute).Should(BeTrue(), agentProc.Tail(30))
		Expect(spoke.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "late"}, &corev1.ConfigMap{})).To(Succeed())

		By("losing the hub, and restoring the snapshot into a new data directory")
		hub.Kill()
		res = runHubCommand(ctx, "snapshot", "restore", archive, "--data-dir", dir)
		Expect(res.code).NotTo(Equal(0))
		Expect(res.stderr).To(ContainSubstring("is not empty"))
		restoredDir := filepath.Join(GinkgoT().TempDir(), "restored")
		res = runHubCommand(ctx, "snapshot", "restore", archive, "--data-dir", restoredDir)
		Expect(res.code).To(Equal(0), res.stderr)
		restarted := time.Now()
		hub, err = framework.StartHubProcessOnPort(ctx, *binDir, restoredDir, hub.Port, 2*time.Minute)
		Expect(err).NotTo(HaveOccurred())
		c = devClient(hub.Kubeconfig)

		By("the agent coming back with the certificate it holds")
		Eventually(func() bool { return leaseRenewedAfter(ctx, c, cluster, restarted) }, 2*time.Minute).Should(BeTrue(), agentProc.Tail(30))
		Eventually(func() bool {
			mc := &clusterv1.ManagedCluster{}
			return c.Get(ctx, client.ObjectKey{Name: cluster}, mc) == nil && meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
		}, 2*time.Minute).Should(BeTrue())
		Expect(countCSRs(ctx, c)).To(Equal(csrsBefore), "the agent asked for no new certificate")
		Expect(agentProc.Exited()).To(BeFalse())

		By("the work after the snapshot is gone from the hub, and its objects from the cluster; the kept object was not touched")
		Expect(c.Get(ctx, client.ObjectKey{Namespace: cluster, Name: "late"}, &workv1.ManifestWork{})).To(Satisfy(apierrors.IsNotFound))
		Eventually(func() error {
			return spoke.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "late"}, &corev1.ConfigMap{})
		}, 2*time.Minute).Should(Satisfy(apierrors.IsNotFound), agentProc.Tail(30))
		Expect(workApplied(ctx, c, cluster, "kept")).To(BeTrue())
		now := &corev1.ConfigMap{}
		Expect(spoke.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "kept"}, now)).To(Succeed())
		Expect(now.UID).To(Equal(kept.UID))
		Expect(now.ResourceVersion).To(Equal(kept.ResourceVersion), "nothing applied the kept object again")

		By("delivering a new work through the restored hub")
		Expect(c.Create(ctx, configMapWork(cluster, "after", "1"))).To(Succeed())
		Eventually(func() bool { return workApplied(ctx, c, cluster, "after") }, 2*time.Minute).Should(BeTrue(), agentProc.Tail(30))
	})
})
