package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/test/framework"
)

// etcdPeerPort is the members' etcd peer port in the HA container spec.
const etcdPeerPort = 2380

// killWindow is how long the spec watches the hub after a member is
// killed: longer than the 5 leases of containerLease after which a silent
// cluster goes Unknown, so that an agent that lost the hub would show.
const killWindow = 60 * time.Second

// hubMember is one hub process of the three, in its own container.
type hubMember struct {
	name, ip  string
	container *framework.Container
}

// memberArgs are the arguments of a hub member container named name at ip,
// for the etcd cluster initial, its certificate naming sans.
func memberArgs(name, ip string, initial, sans []string) []string {
	return append([]string{"--data-dir", home + "/hub", "--bind-address", "0.0.0.0", "--advertise-address", ip,
		"--secure-port", strconv.Itoa(hubPort),
		// Every member's certificate names every member's address: the
		// agent's kubeconfig names the first, and it verifies whichever
		// member answers against it.
		"--tls-san", strings.Join(sans, ","),
		"--etcd-name", name, "--etcd-peer-url", fmt.Sprintf("https://%s:%d", ip, etcdPeerPort),
		"--etcd-initial-cluster", strings.Join(initial, ",")}, memberLease...)
}

// memberLease is the shortest renew deadline a member accepts, so that a
// killed leader is replaced within half a minute.
var memberLease = []string{"--leader-elect-lease-duration", "15s", "--leader-elect-renew-deadline", "10s", "--leader-elect-retry-period", "2s"}

// memberPKI holds the files of the first member's pki directory that the
// others start from a copy of, by path relative to it.
type memberPKI map[string][]byte

// files are the copies, for a member container's spec.
func (p memberPKI) files() []framework.File {
	var out []framework.File
	for name, data := range p {
		out = append(out, framework.File{Path: home + "/hub/pki/" + name, Data: data, Under: home})
	}
	return out
}

// startHubMembers starts three hub members on hubNet, the second and third
// from a copy of the first one's CA and keys, runs meanwhile (while the
// first makes its PKI), and returns once each is ready or stands by.
func startHubMembers(ctx context.Context, d *framework.Docker, refs map[string]string, hubNet *framework.Network, meanwhile func()) []*hubMember {
	GinkgoHelper()
	members := make([]*hubMember, 3)
	var initial, sans []string
	for i := range members {
		m := &hubMember{name: fmt.Sprintf("hub-%d", i+1), ip: hubNet.Addr(byte(11 + i))}
		members[i] = m
		initial = append(initial, fmt.Sprintf("%s=https://%s:%d", m.name, m.ip, etcdPeerPort))
		sans = append(sans, m.ip)
	}
	spec := func(m *hubMember) framework.ContainerSpec {
		return framework.ContainerSpec{Name: m.name, Image: refs["flotilla-hub"], Network: hubNet, IP: m.ip, Publish: []int{hubPort},
			Args: memberArgs(m.name, m.ip, initial, sans)}
	}

	By("starting the first member, which makes the PKI, and the others from a copy of its CA and keys")
	var err error
	members[0].container, err = d.Start(ctx, spec(members[0]))
	Expect(err).NotTo(HaveOccurred())
	if meanwhile != nil {
		meanwhile()
	}
	pki := copyMemberPKI(ctx, members[0])
	for _, m := range members[1:] {
		s := spec(m)
		s.Files = pki.files()
		m.container, err = d.Start(ctx, s)
		Expect(err).NotTo(HaveOccurred())
	}
	for _, m := range members {
		waitMemberServes(ctx, m, 3*time.Minute)
	}
	return members
}

// copyMemberPKI copies the CA and keys out of a member, once it has made
// them.
func copyMemberPKI(ctx context.Context, m *hubMember) memberPKI {
	GinkgoHelper()
	// The etcd CA is made after the hub CA, once the member knows it is
	// the first: when its certificate is there, everything is.
	Eventually(func() error {
		_, err := m.container.CopyOut(ctx, home+"/hub/pki/etcd/ca.crt")
		return err
	}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed(), func() string { return m.container.Tail(ctx, 20) })
	pki := memberPKI{}
	for _, name := range []string{"ca.crt", "ca.key", "sa.key", "sa.pub", "etcd/ca.crt", "etcd/ca.key"} {
		data, err := m.container.CopyOut(ctx, home+"/hub/pki/"+name)
		Expect(err).NotTo(HaveOccurred())
		pki[name] = data
	}
	return pki
}

// waitMemberServes waits until a member runs and serves: the member that
// leads the hub controllers says it is ready; the others, whose API servers
// and webhooks serve all the same, that they stand by.
func waitMemberServes(ctx context.Context, m *hubMember, timeout time.Duration) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		status, _, err := m.container.State(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(status).To(Equal("running"), m.container.Tail(ctx, 20))
		g.Expect(m.container.Output(ctx)).To(Or(
			ContainSubstring(fmt.Sprintf("flotilla-hub is ready at https://%s:%d", m.ip, hubPort)),
			ContainSubstring("Another hub process leads; standing by")))
	}).WithContext(ctx).WithTimeout(timeout).WithPolling(time.Second).Should(Succeed())
}

// client reaches the member's own API server through its port published
// on 127.0.0.1 (which may change when the container restarts or is
// reconnected), as the admin.
func (m *hubMember) client(ctx context.Context) client.Client {
	GinkgoHelper()
	return devClient(hostKubeconfig(ctx, m.container, home+"/hub/admin.kubeconfig", hubPort))
}

var _ = Describe("A hub of three embedded etcd members, each in a container", Label("containers"), func() {
	It("keeps serving when the member the agent uses is killed and when another is cut off; the cluster stays Available, every work is Applied, and the members rejoin", func(ctx SpecContext) {
		started := time.Now()
		d := requireDocker(ctx)
		refs := imageRefs(ctx, d)
		const cluster = "edge-ha"
		f := &containerFleet{docker: d, cluster: cluster}
		var err error
		f.hubNet, err = d.CreateNetwork(ctx, "hub")
		Expect(err).NotTo(HaveOccurred())
		f.spokeNet, err = d.CreateNetwork(ctx, "spoke")
		Expect(err).NotTo(HaveOccurred())

		members := startHubMembers(ctx, d, refs, f.hubNet, func() { f.startSpoke(ctx, refs) })
		f.spokeReady(ctx)
		clients := make([]client.Client, 3)
		for i, m := range members {
			clients[i] = m.client(ctx)
		}
		By("one store: what is written through one member is read through the others")
		probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "one-store"}, Data: map[string]string{"from": "hub-1"}}
		Expect(clients[0].Create(ctx, probe)).To(Succeed())
		for _, c := range clients[1:] {
			Eventually(func() error { return c.Get(ctx, client.ObjectKeyFromObject(probe), &corev1.ConfigMap{}) }).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
		}

		By("joining the spoke through the first member's address; the agent also knows the others'")
		f.hub = members[0].container
		f.hubURL = fmt.Sprintf("https://%s:%d", members[0].ip, hubPort)
		f.hubClient = clients[1]
		kubeconfig2 := hostKubeconfig(ctx, members[1].container, home+"/hub/admin.kubeconfig", hubPort)
		f.onHub = func(args ...string) cliRun {
			GinkgoHelper()
			return runFlotilla(ctx, append(args, "--kubeconfig", kubeconfig2)...)
		}
		f.join(ctx, refs, "--hub-server", fmt.Sprintf("%s:%d,%s:%d", members[1].ip, hubPort, members[2].ip, hubPort))
		Expect(f.hubClient.Create(ctx, workOf(cluster, "before", configMap("before", map[string]string{"v": "1"})))).To(Succeed())
		Eventually(func() bool { return workApplied(ctx, f.hubClient, cluster, "before") }).WithContext(ctx).WithTimeout(time.Minute).Should(BeTrue())
		Expect(f.agent.Output(ctx)).NotTo(ContainSubstring("Connected to another address of the hub"), "the agent uses the first member, the address in its kubeconfig")

		By(fmt.Sprintf("killing the first member, which the agent uses, while works are created every 500 ms through the second; watching for %s", killWindow))
		_, err = d.Command(ctx, "kill", members[0].container.Name)
		Expect(err).NotTo(HaveOccurred())
		killed := time.Now()
		w := startWorkCreator(ctx, f.hubClient, cluster, "during-kill")
		sawUnknown := false
		Consistently(func() metav1.ConditionStatus {
			s := f.available(ctx)
			sawUnknown = sawUnknown || s == metav1.ConditionUnknown
			return s
		}).WithContext(ctx).WithTimeout(killWindow).WithPolling(time.Second).ShouldNot(Equal(metav1.ConditionUnknown))
		created, failed, lost := w.stop()
		Expect(sawUnknown).To(BeFalse())
		Expect(lost).To(BeEmpty(), "every ManifestWork is created, through a live member, within 10 attempts")
		// A write in flight on the etcd raft leader when it dies times out
		// (the outcome is unknown: the retry may find it stored); the
		// survivors elect a leader within seconds. Nothing else fails.
		for _, fl := range failed {
			Expect(fl.at.Sub(killed)).To(BeNumerically("<", 15*time.Second), "only writes during the etcd election fail: %s", fl.err)
			Expect(fl.err).To(Or(ContainSubstring("etcdserver: request timed out"), ContainSubstring("etcdserver: leader changed")), "the failure is etcd's election")
		}
		Expect(len(created)).To(BeNumerically(">=", int(killWindow/time.Second)), "works were created all along")
		Expect(f.agent.Output(ctx)).To(ContainSubstring("Connected to another address of the hub"), "the agent moved to another member")
		Eventually(func(g Gomega) {
			for _, name := range created {
				g.Expect(workApplied(ctx, f.hubClient, cluster, name)).To(BeTrue(), "work %s is Applied", name)
			}
		}).WithContext(ctx).WithTimeout(30*time.Second).Should(Succeed(), func() string { return f.agent.Tail(ctx, 30) })
		GinkgoWriter.Printf("member killed: %d works created in %s, %d attempts failed during the etcd election (retried), all Applied, cluster Available throughout\n", len(created), killWindow, len(failed))
		lease := &coordinationv1.Lease{}
		Expect(f.hubClient.Get(ctx, client.ObjectKey{Namespace: cluster, Name: clusterv1.ManagedClusterLeaseName}, lease)).To(Succeed())
		Expect(lease.Spec.RenewTime.Time).To(BeTemporally(">", killed), "the agent renewed its lease through another member")

		By("restarting the killed member: it rejoins and serves what was written while it was down")
		Expect(members[0].container.Start(ctx)).To(Succeed())
		Eventually(func(g Gomega) {
			c := devClient(hostKubeconfig(ctx, members[0].container, home+"/hub/admin.kubeconfig", hubPort))
			g.Expect(workApplied(ctx, c, cluster, created[len(created)-1])).To(BeTrue())
			clients[0] = c
		}).WithContext(ctx).WithTimeout(2*time.Minute).WithPolling(time.Second).Should(Succeed(), func() string { return members[0].container.Tail(ctx, 20) })

		By("cutting off a member that does not lead the hub controllers, and reconnecting it")
		cut := standbyMember(ctx, f.hubClient, members[1:])
		other := clients[1]
		if cut == members[1] {
			other = clients[2]
		}
		// f.available asks the hub through f.hubClient: a member that stays.
		f.hubClient = other
		Expect(cut.container.Disconnect(ctx, f.hubNet)).To(Succeed())
		// As after the kill: a write in flight on the cut member while it
		// led etcd times out; sent again, it succeeds (or was stored).
		Eventually(func() error {
			err := other.Create(ctx, workOf(cluster, "during-cut", configMap("during-cut", map[string]string{"v": "1"})))
			if apierrors.IsAlreadyExists(err) {
				return nil
			}
			return err
		}).WithContext(ctx).WithTimeout(15 * time.Second).WithPolling(500 * time.Millisecond).Should(Succeed())
		Eventually(func() bool { return workApplied(ctx, other, cluster, "during-cut") }).WithContext(ctx).WithTimeout(time.Minute).Should(BeTrue(), func() string { return f.agent.Tail(ctx, 30) })
		Expect(f.available(ctx)).To(Equal(metav1.ConditionTrue))
		Expect(cut.container.Connect(ctx, f.hubNet, cut.ip)).To(Succeed())
		Eventually(func(g Gomega) {
			c := devClient(hostKubeconfig(ctx, cut.container, home+"/hub/admin.kubeconfig", hubPort))
			w := &workv1.ManifestWork{}
			g.Expect(c.Get(ctx, client.ObjectKey{Namespace: cluster, Name: "during-cut"}, w)).To(Succeed())
		}).WithContext(ctx).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed(), func() string { return cut.container.Tail(ctx, 20) })
		status, _, err := cut.container.State(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(status).To(Equal("running"), "the cut member rejoined without a restart")
		Expect(f.available(ctx)).To(Equal(metav1.ConditionTrue))
		GinkgoWriter.Printf("HA container spec took %s\n", time.Since(started).Round(time.Second))
	})
})

// workCreator creates ManifestWorks at a steady pace until stopped. A
// create that fails is sent again at the next tick (a create that an
// ambiguous failure did store then says AlreadyExists, which counts as
// created); each failure is recorded with its time.
type workCreator struct {
	cancel  context.CancelFunc
	done    chan struct{}
	mu      sync.Mutex
	created []string
	failed  []creatorFailure
	lost    []string
}

type creatorFailure struct {
	at  time.Time
	err string
}

// startWorkCreator creates a work named prefix-N in namespace cluster
// every 500 ms through c, giving up on one after 10 attempts.
func startWorkCreator(ctx context.Context, c client.Client, cluster, prefix string) *workCreator {
	wctx, cancel := context.WithCancel(ctx)
	w := &workCreator{cancel: cancel, done: make(chan struct{})}
	DeferCleanup(cancel)
	go func() {
		defer GinkgoRecover()
		defer close(w.done)
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		attempts := 0
		for i := 0; ; {
			name := fmt.Sprintf("%s-%d", prefix, i)
			err := c.Create(wctx, workOf(cluster, name, configMap(name, map[string]string{"v": "1"})))
			if wctx.Err() != nil {
				return
			}
			attempts++
			w.mu.Lock()
			switch {
			case err == nil, attempts > 1 && apierrors.IsAlreadyExists(err):
				w.created = append(w.created, name)
				i, attempts = i+1, 0
			case attempts == 10:
				w.failed = append(w.failed, creatorFailure{time.Now(), name + ": " + err.Error()})
				w.lost = append(w.lost, name)
				i, attempts = i+1, 0
			default:
				w.failed = append(w.failed, creatorFailure{time.Now(), name + ": " + err.Error()})
			}
			w.mu.Unlock()
			select {
			case <-wctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

// stop ends the creator and returns the works it created, its failed
// attempts and the works it gave up on.
func (w *workCreator) stop() (created []string, failed []creatorFailure, lost []string) {
	w.cancel()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.created, w.failed, w.lost
}

// standbyMember is the first of members that does not hold the hub
// controllers' lease, by the identity each keeps in its data directory.
func standbyMember(ctx context.Context, c client.Client, members []*hubMember) *hubMember {
	GinkgoHelper()
	lease := &coordinationv1.Lease{}
	Expect(c.Get(ctx, client.ObjectKey{Namespace: "open-cluster-management-hub", Name: "flotilla-hub"}, lease)).To(Succeed())
	Expect(lease.Spec.HolderIdentity).NotTo(BeNil())
	for _, m := range members {
		id, err := m.container.CopyOut(ctx, home+"/hub/hub-identity")
		Expect(err).NotTo(HaveOccurred())
		if !strings.HasPrefix(*lease.Spec.HolderIdentity, strings.TrimSpace(string(id))) {
			return m
		}
	}
	Fail("every member holds the lease")
	return nil
}
