package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"k8s.io/klog/v2"
	konnectivity "sigs.k8s.io/apiserver-network-proxy/konnectivity-client/pkg/client"
	clientproto "sigs.k8s.io/apiserver-network-proxy/konnectivity-client/proto/client"
	"sigs.k8s.io/apiserver-network-proxy/pkg/server"
	"sigs.k8s.io/apiserver-network-proxy/pkg/server/proxystrategies"
	agentproto "sigs.k8s.io/apiserver-network-proxy/proto/agent"
	"sigs.k8s.io/apiserver-network-proxy/proto/header"

	"github.com/flotilla-io/flotilla/internal/tunnel"
)

// Server holds the clusters' tunnels: it serves the agents' side of the
// konnectivity protocol on connections that the hub's API server
// authenticated and upgraded, and dials through them for the door.
//
// Each tunnel gets a konnectivity proxy server of its own, so that a dial
// for one cluster can only ever reach that cluster's agent: routing never
// depends on what an agent says about itself.
type Server struct {
	agents    *grpc.Server
	agentConn *connListener
	frontend  *grpc.Server
	frontLis  *bufconn.Listener

	mu      sync.Mutex
	tunnels map[string]*Tunnel // by cluster
	nextID  atomic.Int64

	// changed is told the name of each cluster whose tunnel came or went.
	changed func(cluster string)
}

// frontendBuffer is the in-memory pipe's buffer, each way, of each
// connection the door opens to its konnectivity frontend: one per
// request in flight (or kept idle) through a tunnel.
const frontendBuffer = 64 << 10

// keepaliveEnforcement lets agents check an idle tunnel every so often.
var keepaliveEnforcement = keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}

// Tunnel is one agent's open tunnel.
type Tunnel struct {
	// Cluster and AgentID name the agent.
	Cluster, AgentID string
	// Since is when it connected.
	Since time.Time
	// Expires is when the client certificate that opened it expires
	// (zero: it was not opened with one); the hub closes it then.
	Expires time.Time

	id        string
	proxy     *server.ProxyServer
	conn      net.Conn
	backend   string
	token     string
	transport *httpTransport
}

// NewServer returns a Server; Serve runs it.
func NewServer() *Server {
	s := &Server{
		agentConn: newConnListener(),
		frontLis:  bufconn.Listen(frontendBuffer),
		tunnels:   map[string]*Tunnel{},
		changed:   func(string) {},
	}
	s.agents = grpc.NewServer(grpc.Creds(clusterCreds{}),
		// An agent's tunnel is idle for hours between requests; keep
		// the connection checked without closing it.
		grpc.KeepaliveEnforcementPolicy(keepaliveEnforcement),
		// An idle tunnel should cost the hub little: gRPC's default
		// 32 KiB read and write buffers per connection would be most of
		// it. The connection is TLS, which buffers a record already, so
		// the reader goes without; the write buffer is returned to a
		// pool after each flush.
		grpc.ReadBufferSize(0), grpc.SharedWriteBuffer(true))
	agentproto.RegisterAgentServiceServer(s.agents, agentService{s})
	s.frontend = grpc.NewServer(grpc.SharedWriteBuffer(true))
	clientproto.RegisterProxyServiceServer(s.frontend, frontendService{s})
	return s
}

// Serve serves the tunnels until ctx ends, then closes them all.
func (s *Server) Serve(ctx context.Context) {
	go func() { _ = s.agents.Serve(s.agentConn) }()
	go func() { _ = s.frontend.Serve(s.frontLis) }()
	<-ctx.Done()
	s.agentConn.Close()
	s.agents.Stop()
	s.frontend.Stop()
}

// Lookup returns cluster's open tunnel, if it has one.
func (s *Server) Lookup(cluster string) (*Tunnel, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tunnels[cluster]
	return t, ok
}

// Count is how many tunnels are open.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tunnels)
}

// Close closes cluster's tunnel, if it has one, and the requests in it.
func (s *Server) Close(cluster string) bool {
	s.mu.Lock()
	t, ok := s.tunnels[cluster]
	s.mu.Unlock()
	if ok {
		t.conn.Close()
	}
	return ok
}

// stopped says whether the tunnel server stopped taking tunnels.
func (s *Server) stopped() bool {
	select {
	case <-s.agentConn.closed:
		return true
	default:
		return false
	}
}

// accept hands an upgraded connection of cluster's agent to the agents'
// gRPC server. The API server authenticated the agent once, when the
// connection was opened; so that a tunnel never outlives that
// credential, the connection is closed when the client certificate
// expires (expires zero: never). The agent reopens its tunnel with the
// certificate it rotated to.
func (s *Server) accept(cluster string, conn net.Conn, expires time.Time) error {
	cc := &clusterConn{Conn: conn, cluster: cluster, expires: expires}
	if !expires.IsZero() {
		cc.expiry = time.AfterFunc(time.Until(expires), func() { conn.Close() })
	}
	if err := s.agentConn.push(cc); err != nil {
		cc.Close()
		return err
	}
	return nil
}

// attach makes t its cluster's tunnel. The newest connection of a cluster
// wins: an agent that restarted before the hub saw its old connection end
// must not wait for it.
func (s *Server) attach(t *Tunnel) {
	s.mu.Lock()
	old := s.tunnels[t.Cluster]
	s.tunnels[t.Cluster] = t
	changed := s.changed
	s.mu.Unlock()
	if old != nil {
		old.conn.Close()
	}
	changed(t.Cluster)
}

// detach forgets t, unless a newer tunnel replaced it.
func (s *Server) detach(t *Tunnel) {
	s.mu.Lock()
	current := s.tunnels[t.Cluster] == t
	if current {
		delete(s.tunnels, t.Cluster)
	}
	changed := s.changed
	s.mu.Unlock()
	t.transport.CloseIdleConnections()
	if current {
		changed(t.Cluster)
	}
}

// byID returns the tunnel with id, if it is still its cluster's.
func (s *Server) byID(cluster, id string) (*Tunnel, bool) {
	t, ok := s.Lookup(cluster)
	if !ok || t.id != id {
		return nil, false
	}
	return t, true
}

// dial opens a connection through t to its agent's forwarder.
func (s *Server) dial(ctx context.Context, t *Tunnel) (net.Conn, error) {
	md := metadata.Pairs(tunnel.ClusterMetadata, t.Cluster, "flotilla-tunnel-id", t.id)
	tunnelCtx := metadata.NewOutgoingContext(context.Background(), md)
	tun, err := konnectivity.CreateSingleUseGrpcTunnelWithContext(ctx, tunnelCtx, "passthrough:///flotilla-hub-proxy",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return s.frontLis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("open a stream to the tunnel of cluster %s: %w", t.Cluster, err)
	}
	conn, err := tun.DialContext(ctx, "tcp", t.backend)
	if err != nil {
		return nil, fmt.Errorf("dial through the tunnel of cluster %s: %w", t.Cluster, err)
	}
	return conn, nil
}

// agentService serves the konnectivity agent protocol: each agent's
// stream is handed to the proxy server of its tunnel.
type agentService struct{ s *Server }

func (a agentService) Connect(stream agentproto.AgentService_ConnectServer) error {
	ctx := stream.Context()
	p, ok := peer.FromContext(ctx)
	info, isCluster := p.AuthInfo.(clusterAuthInfo)
	if !ok || !isCluster {
		return status.Error(codes.Unauthenticated, "the connection was not opened through the hub's API server")
	}
	md, _ := metadata.FromIncomingContext(ctx)
	backend, token := first(md, tunnel.BackendAddressMetadata), first(md, tunnel.BackendTokenMetadata)
	agentID := first(md, header.AgentID)
	if backend == "" || token == "" || agentID == "" {
		return status.Errorf(codes.InvalidArgument, "the agent of cluster %s gave no %s, %s or agentID", info.cluster, tunnel.BackendAddressMetadata, tunnel.BackendTokenMetadata)
	}
	t := &Tunnel{
		Cluster: info.cluster,
		AgentID: agentID,
		Since:   time.Now(),
		Expires: info.expires,
		id:      strconv.FormatInt(a.s.nextID.Add(1), 10),
		proxy:   server.NewProxyServer("flotilla-hub", []proxystrategies.ProxyStrategy{proxystrategies.ProxyStrategyDefault}, 1, &server.AgentTokenAuthenticationOptions{}, 10),
		conn:    info.conn,
		backend: backend,
		token:   token,
	}
	t.transport = newHTTPTransport(func(ctx context.Context) (net.Conn, error) { return a.s.dial(ctx, t) })
	logger := klog.FromContext(ctx).WithValues("cluster", t.Cluster, "agentID", agentID)
	a.s.attach(t)
	logger.Info("Cluster tunnel open")
	err := t.proxy.Connect(stream)
	a.s.detach(t)
	t.conn.Close()
	logger.Info("Cluster tunnel closed", "reason", fmt.Sprint(err))
	return err
}

// frontendService serves the door's dials, each to the proxy server of
// the tunnel it names.
type frontendService struct{ s *Server }

func (f frontendService) Proxy(stream clientproto.ProxyService_ProxyServer) error {
	md, _ := metadata.FromIncomingContext(stream.Context())
	t, ok := f.s.byID(first(md, tunnel.ClusterMetadata), first(md, "flotilla-tunnel-id"))
	if !ok {
		return status.Error(codes.Unavailable, "the tunnel closed")
	}
	return t.proxy.Proxy(stream)
}

func first(md metadata.MD, key string) string {
	if v := md.Get(key); len(v) > 0 {
		return v[0]
	}
	return ""
}

// clusterConn is an upgraded connection whose cluster the hub's API
// server authenticated.
type clusterConn struct {
	net.Conn
	cluster string
	expires time.Time
	// expiry closes the connection when its certificate expires.
	expiry *time.Timer
}

func (c *clusterConn) Close() error {
	if c.expiry != nil {
		c.expiry.Stop()
	}
	return c.Conn.Close()
}

// clusterCreds pass the cluster of a clusterConn to the gRPC server as
// its peer's AuthInfo. The connection is already TLS, terminated by the
// API server, so nothing is negotiated again.
type clusterCreds struct{}

type clusterAuthInfo struct {
	credentials.CommonAuthInfo
	cluster string
	expires time.Time
	conn    net.Conn
}

func (clusterAuthInfo) AuthType() string { return "flotilla-cluster" }

func (clusterCreds) ClientHandshake(context.Context, string, net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return nil, nil, errors.New("the hub never dials a cluster")
}

func (clusterCreds) ServerHandshake(conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	cc, ok := conn.(*clusterConn)
	if !ok {
		return nil, nil, errors.New("not a cluster's tunnel")
	}
	return conn, clusterAuthInfo{CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.PrivacyAndIntegrity}, cluster: cc.cluster, expires: cc.expires, conn: conn}, nil
}

func (clusterCreds) Info() credentials.ProtocolInfo {
	return credentials.ProtocolInfo{SecurityProtocol: "flotilla-cluster"}
}
func (c clusterCreds) Clone() credentials.TransportCredentials { return c }
func (clusterCreds) OverrideServerName(string) error           { return nil }

// connListener is a net.Listener of connections pushed to it.
type connListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newConnListener() *connListener {
	return &connListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *connListener) push(c net.Conn) error {
	select {
	case l.conns <- c:
		return nil
	case <-l.closed:
		return errors.New("the hub's tunnel server has stopped")
	}
}

func (l *connListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *connListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *connListener) Addr() net.Addr { return tunnelAddr{} }

type tunnelAddr struct{}

func (tunnelAddr) Network() string { return "flotilla-tunnel" }
func (tunnelAddr) String() string  { return "flotilla-tunnel" }
