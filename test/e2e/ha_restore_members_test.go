package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/agent"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/hub/snapshot"
	"github.com/flotilla-io/flotilla/test/framework"
)

// restoredMember is one flotilla-hub member started on a restored data
// directory, on 127.0.0.1.
type restoredMember struct {
	name, dir, peerURL string
	port               int
	proc               *framework.Process
}

// kubeconfig is the admin kubeconfig the member wrote at its start.
func (m *restoredMember) kubeconfig() string { return filepath.Join(m.dir, "admin.kubeconfig") }

// serving says whether the member serves: it leads the hub controllers, or
// stands by while another member does.
func (m *restoredMember) serving() bool {
	out := m.proc.Output()
	return strings.Contains(out, "flotilla-hub is ready at") || strings.Contains(out, "Another hub process leads; standing by")
}

var _ = Describe("Hub backup restored into three etcd members", Label("ha"), func() {
	It("restores one archive on each of three members: one etcd cluster with the snapshot's objects and UIDs, the revision moved on, the agent back with its certificate", func(ctx SpecContext) {
		klog.LogToStderr(false)
		klog.SetOutput(GinkgoWriter)
		began := time.Now()
		const cluster = "cluster-rm"

		By("running a single-process hub with a joined cluster and a ConfigMap")
		dir := filepath.Join(GinkgoT().TempDir(), "hub")
		hub, err := framework.StartHubProcess(ctx, *binDir, dir, 2*time.Minute)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { hub.Stop(30 * time.Second) })
		spoke, err := framework.Start(ctx, framework.Spoke)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(spoke.Stop)
		Expect(spoke.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: agent.DefaultNamespace}})).To(Succeed())
		join := joinInfo(runFlotilla(ctx, "init", "-o", "json", "--kubeconfig", hub.Kubeconfig))
		bootstrap := filepath.Join(GinkgoT().TempDir(), "bootstrap.kubeconfig")
		Expect(framework.WriteBootstrapKubeconfig(hub.Kubeconfig, join.URL, join.Token, bootstrap)).To(Succeed())
		agentProc := startAgent(ctx, spoke, bootstrap, cluster)
		res := runFlotilla(ctx, "accept", "--clusters", cluster, "--wait", "--timeout", "3m", "--kubeconfig", hub.Kubeconfig)
		Expect(res.code).To(Equal(0), res.stderr, agentProc.Tail(30))
		c := devClient(hub.Kubeconfig)
		kept := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "kept"}, Data: map[string]string{"k": "v"}}
		Expect(c.Create(ctx, kept)).To(Succeed())
		mc := &clusterv1.ManagedCluster{}
		Expect(c.Get(ctx, client.ObjectKey{Name: cluster}, mc)).To(Succeed())
		csrsBefore := countCSRs(ctx, c)
		before := &corev1.ConfigMapList{}
		Expect(c.List(ctx, before, client.InNamespace("default"))).To(Succeed())
		rvBefore, err := strconv.ParseInt(before.ResourceVersion, 10, 64)
		Expect(err).NotTo(HaveOccurred())

		By("taking a snapshot while it runs, writing after it, then losing the hub")
		archive := filepath.Join(GinkgoT().TempDir(), "hub.tar.gz")
		res = runHubCommand(ctx, "snapshot", "save", archive, "--data-dir", dir)
		Expect(res.code).To(Equal(0), res.stderr)
		Expect(c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "late"}})).To(Succeed())
		hub.Kill()
		_, err = os.Stat(filepath.Join(dir, "pki", "etcd", "ca.crt"))
		Expect(err).To(HaveOccurred(), "a single-process hub has no etcd peer CA: the snapshot made one, not the hub")

		By("restoring the same archive into three member data directories")
		members := make([]*restoredMember, 3)
		var entries []string
		for i := range members {
			peer, err := framework.FreePort()
			Expect(err).NotTo(HaveOccurred())
			m := &restoredMember{name: fmt.Sprintf("hub-%d", i+1), dir: filepath.Join(GinkgoT().TempDir(), fmt.Sprintf("hub-%d", i+1)),
				peerURL: fmt.Sprintf("https://127.0.0.1:%d", peer)}
			// The first member takes the lost hub's address, which the agent's kubeconfig names.
			if m.port = hub.Port; i > 0 {
				m.port, err = framework.FreePort()
				Expect(err).NotTo(HaveOccurred())
			}
			members[i] = m
			entries = append(entries, m.name+"="+m.peerURL)
		}
		initialCluster := strings.Join(entries, ",")
		res = runHubCommand(ctx, "snapshot", "restore", archive, "--data-dir", members[1].dir,
			"--etcd-name", "hub-2", "--etcd-peer-url", members[0].peerURL, "--etcd-initial-cluster", initialCluster)
		Expect(res.code).NotTo(Equal(0))
		Expect(res.stderr).To(ContainSubstring(`--etcd-initial-cluster gives member "hub-2" the peer URL ` + members[1].peerURL + `, but --etcd-peer-url is ` + members[0].peerURL))
		res = runHubCommand(ctx, "snapshot", "restore", archive, "--data-dir", members[1].dir, "--etcd-name", "hub-2")
		Expect(res.code).NotTo(Equal(0))
		Expect(res.stderr).To(ContainSubstring("give --etcd-initial-cluster too"))
		restoreStarted := time.Now()
		for _, m := range members {
			res = runHubCommand(ctx, "snapshot", "restore", archive, "--data-dir", m.dir,
				"--etcd-name", m.name, "--etcd-peer-url", m.peerURL, "--etcd-initial-cluster", initialCluster)
			Expect(res.code).To(Equal(0), res.stderr)
			Expect(res.stderr).To(ContainSubstring("as etcd member " + m.name))
		}
		restoreTook := time.Since(restoreStarted)
		etcdCA, err := os.ReadFile(filepath.Join(members[0].dir, "pki", "etcd", "ca.crt"))
		Expect(err).NotTo(HaveOccurred())
		for i, m := range members {
			ca, err := os.ReadFile(filepath.Join(m.dir, "pki", "etcd", "ca.crt"))
			Expect(err).NotTo(HaveOccurred())
			Expect(bytes.Equal(ca, etcdCA)).To(BeTrue(), "every member has the archive's etcd CA")
			for _, f := range []string{"pki/apiserver.crt", "pki/admin.crt", "pki/etcd/peer.crt", "pki/webhook/tls.crt", "admin.kubeconfig"} {
				_, err := os.Stat(filepath.Join(m.dir, f))
				Expect(err).To(HaveOccurred(), "%s of %s is the member's own, made at its start", f, m.name)
			}
			_, err = os.Stat(filepath.Join(m.dir, "hub-identity"))
			Expect(err == nil).To(Equal(i == 0), "only the first member takes the lost hub's identity in the election")
		}

		By("starting the three members together")
		webhook, err := framework.FreePort()
		Expect(err).NotTo(HaveOccurred())
		started := time.Now()
		for _, m := range members {
			m.proc, err = framework.StartProcess(context.WithoutCancel(ctx), filepath.Join(*binDir, "flotilla-hub"),
				"--data-dir", m.dir, "--secure-port", strconv.Itoa(m.port),
				"--metrics-bind-address", "0", "--health-probe-bind-address", "0",
				// One machine: the three share the webhook's address.
				"--webhook-port", strconv.Itoa(webhook), "--webhook-reuse-port",
				"--etcd-name", m.name, "--etcd-peer-url", m.peerURL, "--etcd-listen-peer-url", m.peerURL,
				"--etcd-initial-cluster", initialCluster)
			Expect(err).NotTo(HaveOccurred())
			// Killed when the spec fails half-way; stopped at its end.
			DeferCleanup(m.proc.Kill)
		}
		for _, m := range members {
			Eventually(func() bool { return m.serving() || m.proc.Exited() }, 3*time.Minute, 100*time.Millisecond).Should(BeTrue(), func() string { return m.proc.Tail(30) })
			Expect(m.proc.Exited()).To(BeFalse(), m.proc.Tail(30))
		}
		startTook := time.Since(started)

		By("every member serving the snapshot's objects with their UIDs, and not what was written after it")
		clients := make([]client.Client, len(members))
		for i, m := range members {
			clients[i] = devClient(m.kubeconfig())
			got := &corev1.ConfigMap{}
			Expect(clients[i].Get(ctx, client.ObjectKeyFromObject(kept), got)).To(Succeed(), m.name)
			Expect(got.UID).To(Equal(kept.UID), m.name)
			Expect(got.ResourceVersion).To(Equal(kept.ResourceVersion), m.name)
			gotMC := &clusterv1.ManagedCluster{}
			Expect(clients[i].Get(ctx, client.ObjectKey{Name: cluster}, gotMC)).To(Succeed(), m.name)
			Expect(gotMC.UID).To(Equal(mc.UID), m.name)
			Expect(clients[i].Get(ctx, client.ObjectKey{Namespace: "default", Name: "late"}, &corev1.ConfigMap{})).To(Satisfy(apierrors.IsNotFound), m.name)
		}

		By("a write through the second member read through the others, at a revision far past the snapshot's")
		written := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "after-restore"}}
		Expect(clients[1].Create(ctx, written)).To(Succeed())
		for _, i := range []int{0, 2} {
			Eventually(func() (uid string, err error) {
				got := &corev1.ConfigMap{}
				err = clients[i].Get(ctx, client.ObjectKeyFromObject(written), got)
				return string(got.UID), err
			}, 30*time.Second).Should(Equal(string(written.UID)), members[i].name)
		}
		rvAfter, err := strconv.ParseInt(written.ResourceVersion, 10, 64)
		Expect(err).NotTo(HaveOccurred())
		Expect(rvAfter).To(BeNumerically(">", rvBefore+snapshot.RevisionBump))

		By("a watch from a revision before the snapshot ending with 410 Gone on every member")
		for _, m := range members {
			w, err := devKube(m.kubeconfig()).CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{ResourceVersion: before.ResourceVersion})
			if err == nil {
				var ev watch.Event
				Eventually(w.ResultChan(), 30*time.Second).Should(Receive(&ev), m.name)
				w.Stop()
				Expect(ev.Type).To(Equal(watch.Error), m.name)
				err = apierrors.FromObject(ev.Object)
			}
			Expect(apierrors.IsResourceExpired(err) || apierrors.IsGone(err)).To(BeTrue(), "%s: %v", m.name, err)
		}

		By("the agent coming back through the first member with the certificate it holds")
		Eventually(func() bool { return leaseRenewedAfter(ctx, clients[0], cluster, started) }, 2*time.Minute).Should(BeTrue(), agentProc.Tail(30))
		Eventually(func() bool {
			got := &clusterv1.ManagedCluster{}
			return clients[0].Get(ctx, client.ObjectKey{Name: cluster}, got) == nil && meta.IsStatusConditionTrue(got.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
		}, 2*time.Minute).Should(BeTrue())
		Expect(countCSRs(ctx, clients[2])).To(Equal(csrsBefore), "the agent asked for no new certificate")
		Expect(agentProc.Exited()).To(BeFalse())

		By("stopping the members one after another: the last, its peers gone and with them the quorum, without waiting out its 30 s drain bound")
		for _, m := range members {
			// The drain bound and etcd's own close (7 s) took 37 s.
			stopping := time.Now()
			code, err := m.proc.Stop(25 * time.Second)
			Expect(err).NotTo(HaveOccurred(), "%s: %s", m.name, m.proc.Tail(30))
			Expect(code).To(Equal(0), "%s: %s", m.name, m.proc.Tail(30))
			GinkgoWriter.Printf("%s stopped in %s\n", m.name, time.Since(stopping).Round(100*time.Millisecond))
		}

		AddReportEntry("restore into 3 members", fmt.Sprintf("restores %s (3 commands), start → all serving %s, spec %s",
			restoreTook.Round(time.Millisecond), startTook.Round(100*time.Millisecond), time.Since(began).Round(100*time.Millisecond)))
		GinkgoWriter.Printf("restore into 3 members: restores %s, start → all serving %s, whole spec %s\n", restoreTook, startTook, time.Since(began))
	})
})
