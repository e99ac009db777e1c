package proxy

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	konnectivity "sigs.k8s.io/apiserver-network-proxy/pkg/agent"

	"github.com/flotilla-io/flotilla/internal/tunnel"
)

// Config configures the agent's end of the cluster proxy.
type Config struct {
	// ClusterName and AgentID name the agent.
	ClusterName, AgentID string
	// Hub reaches the hub as the agent (its client certificate).
	Hub *rest.Config
	// HubTLS, when set, is the TLS configuration of the agent's hub
	// connections, used instead of Hub's: the agent's registration hands
	// one that presents the newest client certificate at each handshake,
	// while Hub's transport is not one the tunnel can use.
	HubTLS *tls.Config
	// HubDial, when set, opens the TCP connections to the hub; the
	// registration closes those it opened when it swaps the certificate,
	// which makes the tunnel reconnect with the new one.
	HubDial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Spoke reaches the managed cluster with the agent's own credentials,
	// which must allow impersonating users and groups.
	Spoke *rest.Config
	// UserPrefix and GroupPrefix begin the names hub callers have on the
	// managed cluster; empty means DefaultPrefix. Neither may be empty
	// after that: a hub user must never become a cluster user of the
	// same name.
	UserPrefix, GroupPrefix string
}

// Run keeps the tunnel open until ctx ends, reconnecting after the hub
// restarts or the connection breaks.
func Run(ctx context.Context, cfg Config) error {
	logger := klog.FromContext(ctx)
	if cfg.UserPrefix == "" {
		cfg.UserPrefix = DefaultPrefix
	}
	if cfg.GroupPrefix == "" {
		cfg.GroupPrefix = DefaultPrefix
	}
	hub, err := url.Parse(cfg.Hub.Host)
	if err != nil || hub.Host == "" {
		return fmt.Errorf("the hub URL %q: %v", cfg.Hub.Host, err)
	}
	tlsConfig, err := hubTLSConfig(cfg.Hub, cfg.HubTLS)
	if err != nil {
		return err
	}
	dial := cfg.HubDial
	if dial == nil {
		dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	token, err := randomHex(32)
	if err != nil {
		return err
	}
	fwd, err := newForwarder(cfg.Spoke, token, cfg.UserPrefix, cfg.GroupPrefix, logger)
	if err != nil {
		return err
	}
	// Only what arrives through the tunnel is forwarded, and it carries
	// the token; the listener is on loopback so nothing else routes to it.
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listen for the tunnel's connections: %w", err)
	}
	srv := &http.Server{Handler: fwd, ReadHeaderTimeout: 30 * time.Second, ErrorLog: nil}
	go func() { _ = srv.Serve(lis) }()
	defer srv.Close()

	suffix, err := randomHex(4)
	if err != nil {
		return err
	}
	md := metadata.Pairs(tunnel.BackendAddressMetadata, lis.Addr().String(), tunnel.BackendTokenMetadata, token)
	logger.Info("Opening the cluster proxy's tunnel to the hub", "hub", hub.Host, "userPrefix", cfg.UserPrefix, "groupPrefix", cfg.GroupPrefix)
	// The konnectivity client set reconnects by itself, but one whose
	// connection broke while it carried requests may never let go of it
	// (seen after hub restarts). So a broken tunnel, or a hub that does
	// not answer, gets a fresh client set; the library's backoff paces
	// the dials of each, up to SyncIntervalCap apart (which is what a
	// denied cluster's agent waits between dials).
	pause := newPause()
	for ctx.Err() == nil {
		opened := time.Now()
		broke := make(chan struct{})
		var once sync.Once
		dialer := &upgradeDialer{tls: tlsConfig, dialTCP: dial, host: hub.Host, path: tunnel.TunnelPath(cfg.ClusterName), broke: func() { once.Do(func() { close(broke) }) }}
		stop := make(chan struct{})
		cs := (&konnectivity.ClientSetConfig{
			Address:         hub.Host,
			AgentID:         cfg.ClusterName + "-" + cfg.AgentID + "-" + suffix,
			SyncInterval:    time.Second,
			ProbeInterval:   5 * time.Second,
			SyncIntervalCap: 15 * time.Second,
			XfrChannelSize:  150,
			DialOptions: []grpc.DialOption{
				grpc.WithContextDialer(dialer.dial),
				// The upgraded connection is the TLS connection to the hub.
				grpc.WithTransportCredentials(insecure.NewCredentials()),
				grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 30 * time.Second, Timeout: 15 * time.Second, PermitWithoutStream: true}),
				grpc.WithStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
					return streamer(metadata.NewOutgoingContext(ctx, metadata.Join(md, outgoing(ctx))), desc, cc, method, opts...)
				}),
			},
		}).NewAgentClientSet(make(chan struct{}), stop)
		cs.SetServerCounter(konnectivity.NewResponseBasedCounter(cs))
		cs.Serve()
		select {
		case <-ctx.Done():
		case <-broke:
			logger.Info("The cluster proxy's tunnel broke or the hub does not answer; opening a new one once it does")
		}
		close(stop)
		// A tunnel that broke soon after it opened (a hub shutting
		// down upgrades and drops it) is opened again after a growing
		// pause; one that held for a while, at once.
		if time.Since(opened) > tunnelHeld {
			pause = newPause()
		}
		if !sleep(ctx, pause.Step()) {
			break
		}
		// Then wait for the hub to accept connections again, polling
		// often, rather than on the client set's backoff, which grows
		// to SyncIntervalCap: the tunnel opens moments after the hub is
		// back.
		waitForHub(ctx, dial, hub.Host)
	}
	return nil
}

// tunnelHeld is how long a tunnel must have stayed open for the next
// one to be opened without a pause.
const tunnelHeld = 30 * time.Second

// hubPollInterval is how often an agent whose hub does not answer dials
// it to see whether it is back.
const hubPollInterval = 250 * time.Millisecond

func newPause() *wait.Backoff {
	return &wait.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Jitter: 0.1, Steps: math.MaxInt32, Cap: 5 * time.Second}
}

// sleep waits d, and says false if ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// waitForHub returns once a TCP connection to the hub's host opens, or
// ctx ends.
func waitForHub(ctx context.Context, dial func(ctx context.Context, network, addr string) (net.Conn, error), host string) {
	for {
		dctx, cancel := context.WithTimeout(ctx, time.Second)
		conn, err := dial(dctx, "tcp", host)
		cancel()
		if err == nil {
			conn.Close()
			return
		}
		if !sleep(ctx, hubPollInterval) {
			return
		}
	}
}

func outgoing(ctx context.Context) metadata.MD {
	md, _ := metadata.FromOutgoingContext(ctx)
	return md
}

// upgradeDialer opens a tunnel: a TLS connection to the hub's API server
// (the agent's client certificate) whose request the hub upgrades.
type upgradeDialer struct {
	tls        *tls.Config
	dialTCP    func(ctx context.Context, network, addr string) (net.Conn, error)
	host, path string
	// broke is called when an open tunnel's connection fails, or the
	// hub does not accept connections.
	broke func()
}

func (d *upgradeDialer) dial(ctx context.Context, _ string) (net.Conn, error) {
	raw, err := d.dialTCP(ctx, "tcp", d.host)
	if err != nil {
		// The hub is down: Run waits for it, then opens a new tunnel.
		d.broke()
		return nil, fmt.Errorf("dial the hub %s: %w", d.host, err)
	}
	cfg := d.tls.Clone()
	if cfg.ServerName == "" {
		host, _, _ := net.SplitHostPort(d.host)
		cfg.ServerName = host
	}
	conn := tls.Client(raw, cfg)
	if err := conn.HandshakeContext(ctx); err != nil {
		raw.Close()
		return nil, fmt.Errorf("TLS with the hub %s: %w", d.host, err)
	}
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	req := &http.Request{
		Method: http.MethodPost,
		URL:    &url.URL{Scheme: "https", Host: d.host, Path: d.path},
		Host:   d.host,
		Header: http.Header{"Connection": {"Upgrade"}, "Upgrade": {tunnel.UpgradeProtocol}, "User-Agent": {"flotilla-agent"}},
	}
	br := bufio.NewReader(conn)
	err = req.Write(conn)
	var resp *http.Response
	if err == nil {
		resp, err = http.ReadResponse(br, req)
	}
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("open a tunnel at %s%s: %w", d.host, d.path, err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		conn.Close()
		return nil, fmt.Errorf("the hub refused the tunnel at %s%s: %s: %s", d.host, d.path, resp.Status, strings.TrimSpace(string(body)))
	}
	_ = conn.SetDeadline(time.Time{})
	return &bufferedConn{Conn: conn, r: br, broke: d.broke}, nil
}

// bufferedConn is the upgraded connection, whose reader may hold bytes
// read ahead with the response; it says when it fails.
type bufferedConn struct {
	net.Conn
	r     *bufio.Reader
	broke func()
}

func (c *bufferedConn) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err != nil {
		c.broke()
	}
	return n, err
}

// hubTLSConfig is the TLS configuration of the agent's hub client, for
// HTTP/1.1 (the upgrade): given, or else cfg's.
func hubTLSConfig(cfg *rest.Config, given *tls.Config) (*tls.Config, error) {
	var base *tls.Config
	if given != nil {
		base = given.Clone()
	} else {
		c, err := rest.TLSConfigFor(cfg)
		if err != nil {
			return nil, fmt.Errorf("the agent's TLS configuration for the hub: %w", err)
		}
		if c == nil {
			return nil, errors.New("the agent's hub client configuration has no TLS: the tunnel needs its client certificate")
		}
		base = c.Clone()
	}
	base.NextProtos = []string{"http/1.1"}
	return base, nil
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
