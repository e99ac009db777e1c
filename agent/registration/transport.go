package registration

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/connrotation"
)

// userAgent is what the agent's requests to the hub say they come from.
const userAgent = "flotilla-agent"

// hubConnection is a client configuration for the hub whose client
// certificate can be swapped while clients built from it are in use.
type hubConnection struct {
	config *rest.Config
	// tls is config's TLS configuration, for connections that are not
	// HTTP requests (the cluster proxy's tunnel).
	tls    *tls.Config
	cert   atomic.Pointer[tls.Certificate]
	dialer *connrotation.Dialer
}

// newHubConnection returns a connection to hub authenticated with certPEM
// and keyPEM.
// others are further addresses (host:port) of the same hub, dialled when
// hub's does not answer.
func newHubConnection(hub *clientcmdapi.Cluster, others []string, certPEM, keyPEM []byte) (*hubConnection, error) {
	c := &hubConnection{}
	if err := c.setCertificate(certPEM, keyPEM); err != nil {
		return nil, err
	}
	tlsConfig := &tls.Config{
		MinVersion: tls.VersionTLS12,
		ServerName: hub.TLSServerName,
		// Asked at every handshake, so that new connections use the
		// certificate swapped in last.
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return c.cert.Load(), nil
		},
	}
	if len(hub.CertificateAuthorityData) > 0 {
		tlsConfig.RootCAs = x509.NewCertPool()
		if !tlsConfig.RootCAs.AppendCertsFromPEM(hub.CertificateAuthorityData) {
			return nil, errors.New("the hub CA is not PEM")
		}
	}
	proxy := http.ProxyFromEnvironment
	if hub.ProxyURL != "" {
		u, err := url.Parse(hub.ProxyURL)
		if err != nil {
			return nil, err
		}
		proxy = http.ProxyURL(u)
	}
	dial := (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	failover := newHubDialer(hub.Server, others)
	if failover != nil {
		dial = failover.DialContext
	}
	c.dialer = connrotation.NewDialer(dial)
	transport := utilnet.SetTransportDefaults(&http.Transport{
		Proxy:               proxy,
		TLSClientConfig:     tlsConfig,
		DialContext:         c.dialer.DialContext,
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: 25,
	})
	var rt http.RoundTripper = transport
	if hub.ProxyURL == "" {
		// Behind a proxy the hub's address says nothing about whether it is back.
		wt := newWaitingTransport(transport, hub.Server)
		if failover != nil {
			wt.dial = failover.DialContext
		}
		rt = wt
	}
	c.config = &rest.Config{Host: hub.Server, Transport: rt, UserAgent: userAgent}
	c.tls = tlsConfig
	return c, nil
}

// setCertificate makes new connections present certPEM.
func (c *hubConnection) setCertificate(certPEM, keyPEM []byte) error {
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return err
	}
	c.cert.Store(&pair)
	return nil
}

// swap presents certPEM from now on: it closes every open connection, so
// that clients reconnect with it.
func (c *hubConnection) swap(certPEM, keyPEM []byte) error {
	if err := c.setCertificate(certPEM, keyPEM); err != nil {
		return err
	}
	c.dialer.CloseAll()
	return nil
}

// close closes every open connection.
func (c *hubConnection) close() { c.dialer.CloseAll() }

// hubAddress is the host:port of a hub's https URL, "" if it has none.
func hubAddress(server string) string {
	u, err := url.Parse(server)
	if err != nil || u.Host == "" {
		return ""
	}
	if u.Port() == "" {
		return net.JoinHostPort(u.Hostname(), "443")
	}
	return u.Host
}
