package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"

	"github.com/flotilla-io/flotilla/agent"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/test/framework"
)

// externalEtcd is an etcd cluster of three members run in the test
// process, serving clients over TLS with client-certificate
// authentication only.
type externalEtcd struct {
	members []*embed.Etcd
	// stop closes a member once (embed.Etcd.Close must not run twice).
	stop []func()
	// httpsURLs are the members' client URLs.
	httpsURLs []string
	// caFile signed every member's certificate; certFile and keyFile are
	// the client certificate the hubs authenticate with.
	caFile, certFile, keyFile string
}

// startExternalEtcd starts three members under dir and waits until they
// have a leader.
func startExternalEtcd(dir string) *externalEtcd {
	GinkgoHelper()
	x := &externalEtcd{}
	pki := filepath.Join(dir, "pki")
	Expect(os.MkdirAll(pki, 0o700)).To(Succeed())
	caCert, caKey := writeTestCA(pki)
	x.caFile = filepath.Join(pki, "ca.crt")
	serverCert, serverKey := writeTestCert(pki, "server", caCert, caKey, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth})
	x.certFile, x.keyFile = writeTestCert(pki, "flotilla-hub", caCert, caKey, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth})
	tlsInfo := transport.TLSInfo{CertFile: serverCert, KeyFile: serverKey, TrustedCAFile: x.caFile, ClientCertAuth: true}

	const n = 3
	peerURLs := make([]string, n)
	var initial []string
	for i := range n {
		peerURLs[i] = "https://127.0.0.1:" + strconv.Itoa(freePort())
		initial = append(initial, fmt.Sprintf("etcd-%d=%s", i, peerURLs[i]))
		x.httpsURLs = append(x.httpsURLs, "https://127.0.0.1:"+strconv.Itoa(freePort()))
	}
	for i := range n {
		cfg := embed.NewConfig()
		cfg.Name = fmt.Sprintf("etcd-%d", i)
		cfg.Dir = filepath.Join(dir, cfg.Name)
		cfg.ListenClientUrls = mustURLs(x.httpsURLs[i])
		cfg.AdvertiseClientUrls = mustURLs(x.httpsURLs[i])
		cfg.ListenPeerUrls = mustURLs(peerURLs[i])
		cfg.AdvertisePeerUrls = mustURLs(peerURLs[i])
		cfg.InitialCluster = strings.Join(initial, ",")
		cfg.InitialClusterToken = "flotilla-e2e"
		cfg.ClientTLSInfo = tlsInfo
		cfg.PeerTLSInfo = tlsInfo
		cfg.LogOutputs = []string{filepath.Join(dir, cfg.Name+".log")}
		e, err := embed.StartEtcd(cfg)
		Expect(err).NotTo(HaveOccurred())
		x.members = append(x.members, e)
		stop := sync.OnceFunc(e.Close)
		x.stop = append(x.stop, stop)
		DeferCleanup(stop)
	}
	for _, e := range x.members {
		select {
		case <-e.Server.ReadyNotify():
		case err := <-e.Err():
			Fail("etcd member failed: " + err.Error())
		case <-time.After(time.Minute):
			Fail("the etcd members had no leader after a minute; see " + dir)
		}
	}
	return x
}

// leader is the member that leads the raft.
func (x *externalEtcd) leader() int {
	GinkgoHelper()
	for i, e := range x.members {
		if e.Server.Leader() == e.Server.MemberID() {
			return i
		}
	}
	Fail("no etcd member leads")
	return -1
}

func freePort() int {
	GinkgoHelper()
	p, err := framework.FreePort()
	Expect(err).NotTo(HaveOccurred())
	return p
}

func mustURLs(ss ...string) []url.URL {
	GinkgoHelper()
	var out []url.URL
	for _, s := range ss {
		u, err := url.Parse(s)
		Expect(err).NotTo(HaveOccurred())
		out = append(out, *u)
	}
	return out
}

// snapshot returns how many works w created and how many attempts failed
// so far, without stopping it.
func (w *workCreator) snapshot() (created, failed, lost int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.created), len(w.failed), len(w.lost)
}

// writeTestCA writes ca.crt and ca.key into dir.
func writeTestCA(dir string) (*x509.Certificate, *ecdsa.PrivateKey) {
	GinkgoHelper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	Expect(err).NotTo(HaveOccurred())
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "etcd-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	Expect(err).NotTo(HaveOccurred())
	cert, err := x509.ParseCertificate(der)
	Expect(err).NotTo(HaveOccurred())
	writePEM(filepath.Join(dir, "ca.crt"), "CERTIFICATE", der)
	return cert, key
}

// writeTestCert writes name.crt and name.key, signed by ca, for 127.0.0.1.
func writeTestCert(dir, name string, ca *x509.Certificate, caKey *ecdsa.PrivateKey, usage []x509.ExtKeyUsage) (certFile, keyFile string) {
	GinkgoHelper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	Expect(err).NotTo(HaveOccurred())
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	Expect(err).NotTo(HaveOccurred())
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: usage,
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	Expect(err).NotTo(HaveOccurred())
	keyDER, err := x509.MarshalECPrivateKey(key)
	Expect(err).NotTo(HaveOccurred())
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	writePEM(certFile, "CERTIFICATE", der)
	writePEM(keyFile, "EC PRIVATE KEY", keyDER)
	return certFile, keyFile
}

func writePEM(path, typ string, der []byte) {
	GinkgoHelper()
	Expect(os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)).To(Succeed())
}

// copyFile copies src to dst, private.
func copyFile(src, dst string) {
	GinkgoHelper()
	data, err := os.ReadFile(src)
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(dst, data, 0o600)).To(Succeed())
}

var _ = Describe("Two hub processes on an external etcd cluster", Label("ha"), func() {
	It("serves one hub from both, moves the agent to the survivor of a SIGKILL without a new CSR, and writes on after an etcd member dies", func(ctx SpecContext) {
		klog.LogToStderr(false)
		klog.SetOutput(GinkgoWriter)
		const cluster = "cluster-x"
		started := time.Now()
		tmp := GinkgoT().TempDir()

		By("starting three etcd members with client TLS")
		etcd := startExternalEtcd(filepath.Join(tmp, "etcd"))
		GinkgoWriter.Printf("etcd cluster of 3 ready in %s\n", time.Since(started).Round(time.Millisecond))

		webhookPort := strconv.Itoa(freePort())
		hubArgs := append([]string{
			"--tls-san", "127.0.0.1",
			"--etcd-servers", strings.Join(etcd.httpsURLs, ","),
			"--etcd-cafile", etcd.caFile, "--etcd-certfile", etcd.certFile, "--etcd-keyfile", etcd.keyFile,
			// Both processes on one machine serve one webhook address.
			"--webhook-port", webhookPort, "--webhook-reuse-port",
		}, "--leader-elect-lease-duration", "15s", "--leader-elect-renew-deadline", "10s", "--leader-elect-retry-period", "2s")

		By("starting hub A, then hub B from a copy of A's CA and service-account keys")
		dirA, dirB := filepath.Join(tmp, "hub-a"), filepath.Join(tmp, "hub-b")
		hubA, err := framework.StartHubProcess(ctx, *binDir, dirA, 2*time.Minute, hubArgs...)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { hubA.Stop(30 * time.Second) })
		Expect(os.MkdirAll(filepath.Join(dirB, "pki"), 0o700)).To(Succeed())
		for _, f := range []string{"ca.crt", "ca.key", "sa.key", "sa.pub"} {
			copyFile(filepath.Join(dirA, "pki", f), filepath.Join(dirB, "pki", f))
		}
		portB := freePort()
		hubB, err := framework.StartProcess(context.WithoutCancel(ctx), filepath.Join(*binDir, "flotilla-hub"), append([]string{
			"--data-dir", dirB, "--secure-port", strconv.Itoa(portB),
			"--metrics-bind-address", "0", "--health-probe-bind-address", "0"}, hubArgs...)...)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { hubB.Stop(30 * time.Second) })
		Expect(hubB.WaitForOutput("Another hub process leads; standing by", 2*time.Minute)).To(Succeed(), "hub B is a standby of hub A")
		cA, cB := devClient(hubA.Kubeconfig), devClient(filepath.Join(dirB, "admin.kubeconfig"))

		By("reading through B what was written through A")
		Expect(cA.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "written-through-a"}, Data: map[string]string{"v": "a"}})).To(Succeed())
		got := &corev1.ConfigMap{}
		Expect(cB.Get(ctx, client.ObjectKey{Namespace: "default", Name: "written-through-a"}, got)).To(Succeed())
		Expect(got.Data).To(HaveKeyWithValue("v", "a"))

		By("joining a cluster through A with flotilla join --hub-server naming B, and running the agent the Deployment describes")
		spoke, err := framework.Start(ctx, framework.Spoke)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(spoke.Stop)
		join := joinInfo(runFlotilla(ctx, "init", "-o", "json", "--kubeconfig", hubA.Kubeconfig))
		Expect(join.URL).To(Equal("https://127.0.0.1:" + strconv.Itoa(hubA.Port)))
		addrB := "127.0.0.1:" + strconv.Itoa(portB)
		res := runFlotilla(ctx, "join", "--kubeconfig", spoke.AdminKubeconfig, "--hub-token", join.Token,
			"--hub-apiserver", join.URL, "--hub-server", addrB, "--cluster-name", cluster, "--lease-duration-seconds", leaseSeconds)
		Expect(res.code).To(Equal(0), res.stderr)
		deploy := &appsv1.Deployment{}
		Expect(spoke.Client.Get(ctx, client.ObjectKey{Namespace: agent.DefaultNamespace, Name: "flotilla-agent"}, deploy)).To(Succeed())
		args := deploy.Spec.Template.Spec.Containers[0].Args
		Expect(args).To(ContainElement("--hub-server=" + addrB))
		// No kubelet here: run the container's arguments as the binary,
		// with the spoke's kubeconfig instead of the in-cluster one.
		agentProc, err := framework.StartProcess(context.WithoutCancel(ctx), filepath.Join(*binDir, "flotilla-agent"),
			append(args, "--kubeconfig", spoke.AdminKubeconfig, "--metrics-bind-address", "0", "--health-probe-bind-address", "0")...)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { agentProc.Stop(30 * time.Second) })
		res = runFlotilla(ctx, "accept", "--clusters", cluster, "--wait", "--timeout", "3m", "--kubeconfig", hubA.Kubeconfig)
		Expect(res.code).To(Equal(0), res.stderr, agentProc.Tail(30))
		available := func() metav1.ConditionStatus {
			mc := &clusterv1.ManagedCluster{}
			if err := cB.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
				return "error: " + metav1.ConditionStatus(err.Error())
			}
			if c := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable); c != nil {
				return c.Status
			}
			return "missing"
		}
		Eventually(available, 2*time.Minute).Should(Equal(metav1.ConditionTrue), agentProc.Tail(30))
		Expect(cA.Create(ctx, workOf(cluster, "before-kill", configMap("before-kill", map[string]string{"v": "1"})))).To(Succeed())
		Eventually(func() bool { return workApplied(ctx, cB, cluster, "before-kill") }, time.Minute).Should(BeTrue(), agentProc.Tail(30))
		csrsBefore := countCSRs(ctx, cB)

		By("SIGKILLing hub A, which leads and which the agent uses, while works are created through B")
		w := startWorkCreator(ctx, cB, cluster, "during-kill")
		Eventually(func() int { c, _, _ := w.snapshot(); return c }, 10*time.Second).Should(BeNumerically(">=", 2))
		killed := time.Now()
		hubA.Kill()
		var moved time.Duration
		Eventually(func() string { return agentProc.Output() }, 30*time.Second, 20*time.Millisecond).Should(ContainSubstring("Connected to another address of the hub"))
		moved = time.Since(killed)
		Expect(hubB.WaitForOutput("flotilla-hub is ready", 2*time.Minute)).To(Succeed(), "hub B takes over the controllers")
		tookOver := time.Since(killed)
		// Past the 5 lease periods (10 s) after which B's controllers would
		// mark a silent cluster Unknown.
		sawOther := false
		Consistently(func() metav1.ConditionStatus {
			s := available()
			sawOther = sawOther || s != metav1.ConditionTrue
			return s
		}).WithContext(ctx).WithTimeout(15 * time.Second).WithPolling(500 * time.Millisecond).Should(Equal(metav1.ConditionTrue))
		created, failed, lost := w.stop()
		Expect(sawOther).To(BeFalse())
		Expect(lost).To(BeEmpty())
		// The one write that can fail is an admission call in flight on A's
		// webhook server at the instant of the kill (docs/ha.md): B's API
		// server does not retry it. Nothing else fails.
		Expect(len(failed)).To(BeNumerically("<=", 1), "no write through B fails while A dies, but one whose webhook call A had in flight")
		for _, fl := range failed {
			Expect(fl.at.Sub(killed)).To(BeNumerically("<", time.Second), fl.err)
			Expect(fl.err).To(And(ContainSubstring("failed calling webhook"), Or(ContainSubstring("connection reset by peer"), ContainSubstring("EOF"))), "the failure is the admission call in flight on A")
		}
		Expect(len(created)).To(BeNumerically(">=", 20))
		Eventually(func(g Gomega) {
			for _, name := range created {
				g.Expect(workApplied(ctx, cB, cluster, name)).To(BeTrue(), "work %s is Applied", name)
			}
		}, time.Minute).Should(Succeed(), agentProc.Tail(30))
		Expect(leaseRenewedAfter(ctx, cB, cluster, killed.Add(time.Second))).To(BeTrue(), "the agent renews its lease through B")
		Expect(countCSRs(ctx, cB)).To(Equal(csrsBefore), "the agent asked for no new certificate")
		GinkgoWriter.Printf("hub A killed: agent moved to B after %s; B led the controllers after %s; %d works created through B in %s, %d failed, all Applied\n",
			moved.Round(time.Millisecond), tookOver.Round(time.Millisecond), len(created), time.Since(killed).Round(time.Second), len(failed))

		By("stopping the etcd member that leads the raft, without handing over its leadership, while works are created through B")
		w = startWorkCreator(ctx, cB, cluster, "etcd-down")
		// Some writes before the member goes.
		Eventually(func() int { c, _, _ := w.snapshot(); return c }, 10*time.Second).Should(BeNumerically(">=", 3))
		lead := etcd.leader()
		before, _, _ := w.snapshot()
		etcdKilled := time.Now()
		// As a crash: raft stops at once (no leadership transfer, which a
		// clean Close would make first); then the listeners close.
		etcd.members[lead].Server.HardStop()
		go etcd.stop[lead]()
		Eventually(func() int { c, _, _ := w.snapshot(); return c }, time.Minute, 20*time.Millisecond).Should(BeNumerically(">", before))
		firstWrite := time.Since(etcdKilled)
		Eventually(func() int { c, _, _ := w.snapshot(); return c }, time.Minute).Should(BeNumerically(">=", before+20))
		created, failed, lost = w.stop()
		Expect(lost).To(BeEmpty())
		for _, fl := range failed {
			Expect(fl.at.Sub(etcdKilled)).To(BeNumerically("<", 15*time.Second), "only writes during the etcd election fail: %s", fl.err)
			Expect(fl.err).To(Or(ContainSubstring("etcdserver: request timed out"), ContainSubstring("etcdserver: leader changed"), ContainSubstring("etcdserver: no leader")), "the failure is etcd's election")
		}
		Eventually(func(g Gomega) {
			for _, name := range created {
				g.Expect(workApplied(ctx, cB, cluster, name)).To(BeTrue(), "work %s is Applied", name)
			}
		}, time.Minute).Should(Succeed(), agentProc.Tail(30))
		Expect(hubB.Exited()).To(BeFalse(), "hub B survives the etcd election")
		Expect(available()).To(Equal(metav1.ConditionTrue))
		GinkgoWriter.Printf("etcd leader stopped: first write after it %s later; %d works created through B, %d attempts failed (retried), all Applied\n", firstWrite.Round(time.Millisecond), len(created), len(failed))
		for _, fl := range failed {
			GinkgoWriter.Printf("  failed %s after the stop: %s\n", fl.at.Sub(etcdKilled).Round(time.Millisecond), fl.err)
		}

		By("taking a snapshot of the external etcd with the PKI of B's data directory")
		// Every member's URL, the stopped one first, as the hubs have them:
		// etcd takes a snapshot from one member, and save asks each in turn.
		servers := append([]string{etcd.httpsURLs[lead]}, slices.Delete(slices.Clone(etcd.httpsURLs), lead, lead+1)...)
		archive := filepath.Join(tmp, "hub.tar.gz")
		res = runHubCommand(ctx, "snapshot", "save", archive, "--data-dir", dirB, "--etcd-servers", strings.Join(servers, ","),
			"--etcd-cafile", etcd.caFile, "--etcd-certfile", etcd.certFile, "--etcd-keyfile", etcd.keyFile)
		Expect(res.code).To(Equal(0), res.stderr)
		Expect(res.stderr).To(ContainSubstring("written to " + archive))
		info, err := os.Stat(archive)
		Expect(err).NotTo(HaveOccurred())
		Expect(info.Size()).To(BeNumerically(">", 0))
		GinkgoWriter.Printf("external etcd spec took %s\n", time.Since(started).Round(time.Second))
	})
})
