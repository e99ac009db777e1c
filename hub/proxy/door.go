package proxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"

	"github.com/flotilla-io/flotilla/hub/controlplane"
	"github.com/flotilla-io/flotilla/internal/tunnel"
)

// Accepted says whether the hub accepts cluster (spec.hubAcceptsClient);
// an error means it cannot tell yet.
type Accepted func(ctx context.Context, cluster string) (bool, error)

// Handler serves the cluster proxy's paths: the agents' tunnels and the
// door. The API server authenticated and authorized every request it
// receives (see Authorizer).
type Handler struct {
	Server *Server
	// Accepted, until it is set, makes every tunnel wait (503).
	Accepted Accepted
}

var clustersResource = schema.GroupResource{Group: tunnel.Group, Resource: tunnel.Resource}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	cluster, sub, rest, ok := tunnel.ParsePath(r.URL.Path)
	if !ok {
		h.status(w, r, apierrors.NewNotFound(clustersResource, r.URL.Path))
		return
	}
	switch sub {
	case tunnel.TunnelSubresource:
		h.openTunnel(w, r, cluster)
	case tunnel.ProxySubresource:
		h.forward(w, r, cluster, rest)
	default:
		h.status(w, r, apierrors.NewNotFound(clustersResource, cluster+"/"+sub))
	}
}

// openTunnel upgrades an agent's request and hands the connection to the
// tunnel server.
func (h *Handler) openTunnel(w http.ResponseWriter, r *http.Request, cluster string) {
	if r.Method != http.MethodPost || !strings.EqualFold(r.Header.Get("Upgrade"), tunnel.UpgradeProtocol) {
		h.status(w, r, apierrors.NewBadRequest(fmt.Sprintf("a tunnel is opened with POST and Upgrade: %s", tunnel.UpgradeProtocol)))
		return
	}
	if h.Accepted == nil {
		h.status(w, r, apierrors.NewServiceUnavailable("the hub's cluster proxy is starting"))
		return
	}
	if h.Server.stopped() {
		// Before the upgrade: an agent told 503 waits, one whose
		// upgraded tunnel is dropped would come back at once.
		h.status(w, r, apierrors.NewServiceUnavailable("the hub's cluster proxy is stopping"))
		return
	}
	accepted, err := h.Accepted(r.Context(), cluster)
	switch {
	case err != nil:
		h.status(w, r, apierrors.NewServiceUnavailable(fmt.Sprintf("cannot tell whether cluster %s is accepted: %v", cluster, err)))
		return
	case !accepted:
		h.status(w, r, apierrors.NewForbidden(clustersResource, cluster, errors.New("the hub does not accept this cluster (spec.hubAcceptsClient is false)")))
		return
	}
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		h.status(w, r, apierrors.NewInternalError(fmt.Errorf("upgrade the tunnel: %w", err)))
		return
	}
	_, err = buf.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: " + tunnel.UpgradeProtocol + "\r\n\r\n")
	if err == nil {
		err = buf.Flush()
	}
	if err == nil {
		err = h.Server.accept(cluster, &bufferedConn{Conn: conn, r: buf.Reader}, certificateExpiry(r))
	}
	if err != nil {
		conn.Close()
		klog.FromContext(r.Context()).Info("Cannot open a cluster tunnel", "cluster", cluster, "err", err.Error())
	}
}

// certificateExpiry is when the client certificate that authenticated r
// expires, or the zero time if r was not authenticated by one.
func certificateExpiry(r *http.Request) time.Time {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return time.Time{}
	}
	return r.TLS.PeerCertificates[0].NotAfter
}

// forward sends a caller's request through cluster's tunnel.
func (h *Handler) forward(w http.ResponseWriter, r *http.Request, cluster, path string) {
	u, ok := apirequest.UserFrom(r.Context())
	if !ok || u.GetName() == "" {
		h.status(w, r, apierrors.NewUnauthorized("the cluster proxy forwards only requests of an authenticated hub user"))
		return
	}
	t, ok := h.Server.Lookup(cluster)
	if !ok {
		h.status(w, r, apierrors.NewServiceUnavailable(fmt.Sprintf("cluster %s has no tunnel to the hub: its agent is not connected (see the TunnelConnected condition of ManagedCluster %s)", cluster, cluster)))
		return
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = &url.URL{Scheme: "http", Host: t.backend, Path: path, RawQuery: pr.In.URL.RawQuery}
			pr.Out.Host = t.backend
			tunnel.StripIdentity(pr.Out.Header)
			pr.Out.Header.Set(tunnel.TokenHeader, t.token)
			pr.Out.Header.Set(tunnel.UserHeader, u.GetName())
			for _, g := range u.GetGroups() {
				pr.Out.Header.Add(tunnel.GroupHeader, g)
			}
		},
		Transport: t.transport,
		// Watches and logs -f stream: pass every write on at once.
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			h.status(w, r, apierrors.NewServiceUnavailable(fmt.Sprintf("cluster %s: %v", cluster, err)))
		},
	}
	rp.ServeHTTP(w, r)
}

func (h *Handler) status(w http.ResponseWriter, r *http.Request, err *apierrors.StatusError) {
	responsewriters.ErrorNegotiated(err, scheme.Codecs, schema.GroupVersion{Group: tunnel.Group, Version: "v1"}, w, r)
}

// Extension serves h from the hub's embedded API server.
func (h *Handler) Extension() controlplane.Extension {
	return controlplane.Extension{Prefix: tunnel.Prefix, Handler: h, LongRunning: LongRunning, Authorizer: Authorizer}
}

// LongRunning says that every request of the cluster proxy may hold its
// connection open: tunnels for as long as the agent is connected, the
// door for the watches, logs and upgrades it carries.
func LongRunning(r *http.Request, info *apirequest.RequestInfo) bool {
	return info != nil && info.IsResourceRequest && info.APIGroup == tunnel.Group && info.Resource == tunnel.Resource
}

// httpTransport carries the door's requests through one tunnel, keeping
// idle connections for the next request.
type httpTransport = http.Transport

func newHTTPTransport(dial func(context.Context) (net.Conn, error)) *httpTransport {
	return &http.Transport{
		DialContext:         func(ctx context.Context, _, _ string) (net.Conn, error) { return dial(ctx) },
		MaxIdleConnsPerHost: 32,
		IdleConnTimeout:     90 * time.Second,
		// The tunnel carries HTTP/1.1 to the agent, which speaks to
		// its cluster as it likes.
		ForceAttemptHTTP2:     false,
		ResponseHeaderTimeout: 0,
	}
}

// bufferedConn is a hijacked connection whose reader may hold bytes the
// server read ahead.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }
