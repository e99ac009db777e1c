package controlplane

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
)

// EtcdClientTLS is how the API server talks TLS to an external etcd: the
// CA that signed the etcd servers' certificates, and the client
// certificate and key it authenticates with (etcd's --client-cert-auth).
// The fields are kube-apiserver's --etcd-cafile, --etcd-certfile and
// --etcd-keyfile.
type EtcdClientTLS struct {
	CAFile   string
	CertFile string
	KeyFile  string
}

// IsZero reports whether no TLS file is given.
func (t EtcdClientTLS) IsZero() bool { return t == EtcdClientTLS{} }

// ClientConfig is t as a TLS client configuration, nil when no file is given.
func (t EtcdClientTLS) ClientConfig() (*tls.Config, error) {
	if t.IsZero() {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if t.CAFile != "" {
		data, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("--etcd-cafile: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(data) {
			return nil, fmt.Errorf("--etcd-cafile %s holds no PEM certificate: give the CA that signed the etcd servers' certificates (etcd's --trusted-ca-file)", t.CAFile)
		}
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		return nil, errors.New("--etcd-certfile and --etcd-keyfile go together: the client certificate to authenticate to etcd with, and its private key")
	}
	if t.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("--etcd-certfile %s and --etcd-keyfile %s are not a PEM certificate and its key: %w", t.CertFile, t.KeyFile, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// args are the kube-apiserver flags for t.
func (t EtcdClientTLS) args() []string {
	var args []string
	if t.CAFile != "" {
		args = append(args, "--etcd-cafile="+t.CAFile)
	}
	if t.CertFile != "" {
		args = append(args, "--etcd-certfile="+t.CertFile, "--etcd-keyfile="+t.KeyFile)
	}
	return args
}

// validateEtcdServers checks --etcd-servers and the TLS files that go with
// them before anything starts: a typo there would otherwise show only as
// the API server's endless retries.
func validateEtcdServers(servers []string, t EtcdClientTLS) error {
	if len(servers) == 0 {
		if !t.IsZero() {
			return errors.New("--etcd-cafile, --etcd-certfile and --etcd-keyfile are for an external etcd: give its --etcd-servers too (the embedded etcd needs none)")
		}
		return nil
	}
	seen := map[string]bool{}
	schemes := map[string]bool{}
	for _, s := range servers {
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
			return fmt.Errorf("--etcd-servers %q is not an etcd client URL: give scheme, host and port, e.g. https://etcd-1.example.com:2379", s)
		}
		host, port, err := net.SplitHostPort(u.Host)
		if err != nil || host == "" {
			return fmt.Errorf("--etcd-servers %q has no port: give the etcd client port, e.g. %s://%s:2379", s, u.Scheme, u.Host)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("--etcd-servers %q: port %q is not a port number", s, port)
		}
		key := u.Scheme + "://" + u.Host
		if seen[key] {
			return fmt.Errorf("--etcd-servers names %s twice: list each etcd member once", key)
		}
		seen[key] = true
		schemes[u.Scheme] = true
	}
	if len(schemes) > 1 {
		return errors.New("--etcd-servers mixes http:// and https:// URLs: the members of one etcd cluster serve clients alike; use https:// for all of them (with --etcd-cafile, --etcd-certfile, --etcd-keyfile)")
	}
	if t.IsZero() {
		return nil
	}
	if schemes["http"] {
		return errors.New("--etcd-cafile, --etcd-certfile and --etcd-keyfile are for https:// etcd servers, but --etcd-servers names http:// URLs: use the members' https:// client URLs")
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		return errors.New("--etcd-certfile and --etcd-keyfile go together: the client certificate the hub authenticates to etcd with, and its private key; give both, or neither when etcd does not check client certificates")
	}
	_, err := t.ClientConfig()
	return err
}
