package integration

import (
	"errors"
	"io"
	"net"
	"net/url"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/hub/proxy"
	"github.com/flotilla-io/flotilla/internal/tunnel"
)

// freezer is a TCP relay between an agent and the hub that can freeze:
// while frozen it forwards nothing, neither bytes nor closes, and keeps
// every connection open, which is what the hub sees of an agent stopped
// with SIGSTOP (its kernel keeps the connections and answers keepalives).
type freezer struct {
	l      net.Listener
	target string

	mu     sync.Mutex
	frozen bool
	thawed *sync.Cond
	conns  []net.Conn
}

// newFreezer relays 127.0.0.1:<some port> to target (host:port) until the spec ends.
func newFreezer(target string) *freezer {
	GinkgoHelper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	f := &freezer{l: l, target: target}
	f.thawed = sync.NewCond(&f.mu)
	go f.serve()
	DeferCleanup(f.close)
	return f
}

// url is the https URL of the relay.
func (f *freezer) url() string { return "https://" + f.l.Addr().String() }

func (f *freezer) serve() {
	for {
		in, err := f.l.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", f.target)
		if err != nil {
			in.Close()
			continue
		}
		f.mu.Lock()
		f.conns = append(f.conns, in, out)
		f.mu.Unlock()
		go f.pipe(out, in)
		go f.pipe(in, out)
	}
}

// pipe copies from src to dst, each chunk and the close only once thawed.
func (f *freezer) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		f.wait()
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				src.Close()
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				if tc, ok := dst.(*net.TCPConn); ok {
					_ = tc.CloseWrite()
					return
				}
			}
			dst.Close()
			return
		}
	}
}

func (f *freezer) wait() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.frozen {
		f.thawed.Wait()
	}
}

func (f *freezer) freeze() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.frozen = true
}

func (f *freezer) thaw() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.frozen = false
	f.thawed.Broadcast()
}

func (f *freezer) close() {
	f.thaw()
	f.l.Close()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.conns {
		c.Close()
	}
}

var _ = Describe("Cluster proxy: a frozen agent", func() {
	It("turns TunnelConnected Unknown once the agent stops renewing its lease, though its tunnel stays open, and True when it thaws", func(ctx SpecContext) {
		env := newAgentEnv(ctx)
		c := newClusterName("proxy-frozen")
		deleteClusterAfterSpec(c)
		hubURL, err := url.Parse(hubCP.URL)
		Expect(err).NotTo(HaveOccurred())
		relay := newFreezer(hubURL.Host)
		opts := env.options(c)
		opts.Proxy = true
		env.storeBootstrapSecret(ctx, opts.Namespace, bootstrapKubeconfig(relay.url(), hubCP.CAData, env.token))
		startAgent(opts)
		DeferCleanup(relay.thaw) // before the agent stops, should the spec fail while frozen
		acceptAgent(ctx, c)
		condition := func(t string) func() *metav1.Condition {
			return func() *metav1.Condition {
				return meta.FindStatusCondition(getCluster(ctx, c).Status.Conditions, t)
			}
		}
		Eventually(condition(tunnel.ConditionConnected), "60s").Should(And(Not(BeNil()), HaveField("Status", metav1.ConditionTrue)))
		Eventually(condition(clusterv1.ManagedClusterConditionAvailable), "60s").Should(And(Not(BeNil()), HaveField("Status", metav1.ConditionTrue)))

		By("freezing the agent: its connections to the hub stay open, and carry nothing")
		relay.freeze()
		// The lease is renewed every 2 s and the grace is 5 periods: 10 s.
		Eventually(condition(clusterv1.ManagedClusterConditionAvailable), "40s").Should(HaveField("Status", metav1.ConditionUnknown))
		_, open := hubCP.Proxy.Server.Lookup(c)
		Expect(open).To(BeTrue(), "the frozen agent's tunnel must still be open to the hub, or this spec tests nothing")
		Eventually(condition(tunnel.ConditionConnected), "20s").Should(And(
			HaveField("Status", metav1.ConditionUnknown),
			HaveField("Reason", proxy.ReasonAgentLeaseUpdateStopped),
			HaveField("Message", ContainSubstring("stopped renewing its lease")),
		))

		By("thawing it: the agent renews its lease and the tunnel is Connected again")
		relay.thaw()
		Eventually(condition(clusterv1.ManagedClusterConditionAvailable), "60s").Should(HaveField("Status", metav1.ConditionTrue))
		Eventually(condition(tunnel.ConditionConnected), "60s").Should(And(
			HaveField("Status", metav1.ConditionTrue),
			HaveField("Reason", proxy.ReasonAgentConnected),
		))
	})
})
