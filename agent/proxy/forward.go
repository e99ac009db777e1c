package proxy

import (
	"crypto/subtle"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"

	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/flotilla-io/flotilla/internal/tunnel"
)

// DefaultPrefix begins the user and group names a hub caller has on the
// managed cluster.
const DefaultPrefix = "flotilla:"

// forwarder sends requests from the tunnel to the managed cluster.
type forwarder struct {
	token                   string
	userPrefix, groupPrefix string
	target                  *url.URL
	// transport and upgrade reach the cluster with the agent's own
	// credentials; upgrade speaks HTTP/1.1 only, which is what exec,
	// attach and port-forward upgrade.
	transport, upgrade http.RoundTripper
	logger             klog.Logger
}

func newForwarder(spoke *rest.Config, token, userPrefix, groupPrefix string, logger klog.Logger) (*forwarder, error) {
	target, err := url.Parse(spoke.Host)
	if err != nil || target.Host == "" {
		return nil, fmt.Errorf("the managed cluster's API URL %q: %v", spoke.Host, err)
	}
	if target.Scheme == "" {
		target.Scheme = "https"
	}
	transport, err := rest.TransportFor(spoke)
	if err != nil {
		return nil, fmt.Errorf("a transport to the managed cluster: %w", err)
	}
	h1 := rest.CopyConfig(spoke)
	h1.NextProtos = []string{"http/1.1"}
	upgrade, err := rest.TransportFor(h1)
	if err != nil {
		return nil, fmt.Errorf("a transport to the managed cluster: %w", err)
	}
	return &forwarder{token: token, userPrefix: userPrefix, groupPrefix: groupPrefix, target: target, transport: transport, upgrade: upgrade, logger: logger}, nil
}

func (f *forwarder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if subtle.ConstantTimeCompare([]byte(r.Header.Get(tunnel.TokenHeader)), []byte(f.token)) != 1 {
		http.Error(w, "this forwarder serves the hub's tunnel only", http.StatusForbidden)
		return
	}
	user, groups := r.Header.Get(tunnel.UserHeader), r.Header.Values(tunnel.GroupHeader)
	if user == "" {
		http.Error(w, "the hub sent no user: nothing is forwarded without a hub identity", http.StatusForbidden)
		return
	}
	transport := f.transport
	if r.Header.Get("Upgrade") != "" {
		transport = f.upgrade
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(f.target)
			pr.Out.Host = ""
			tunnel.StripIdentity(pr.Out.Header)
			pr.Out.Header.Set("Impersonate-User", f.userPrefix+user)
			for _, g := range groups {
				pr.Out.Header.Add("Impersonate-Group", f.groupPrefix+g)
			}
		},
		Transport:     transport,
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			f.logger.V(1).Info("Cannot forward to the managed cluster", "err", err.Error())
			http.Error(w, fmt.Sprintf("the agent cannot reach the managed cluster's API server: %v", err), http.StatusBadGateway)
		},
	}
	rp.ServeHTTP(w, r)
}
