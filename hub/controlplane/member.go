package controlplane

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/apimachinery/pkg/util/validation"
)

// EtcdMember makes the embedded etcd one member of an etcd cluster whose
// other members are the embedded etcds of other hub processes, on other
// machines. Each process runs its own API server against its own member.
type EtcdMember struct {
	// Name is this member's name, as in InitialCluster.
	Name string
	// PeerURL is the https URL at which the other members reach this one.
	PeerURL string
	// ListenPeerURL is what this member listens on for its peers; empty
	// means every interface on PeerURL's port.
	ListenPeerURL string
	// InitialCluster lists every member as name=peerURL, comma separated.
	// etcd reads it only when the member has no data yet.
	InitialCluster string
	// InitialClusterState is "new" when the members start together for the
	// first time, "existing" for a member added to a running cluster.
	InitialClusterState string
}

// Cluster states etcd knows.
const (
	ClusterStateNew      = "new"
	ClusterStateExisting = "existing"
)

// initialClusterToken keeps the members of a hub's cluster from talking to
// another cluster's members by mistake; the peer CA already does, this
// makes etcd say so.
const initialClusterToken = "flotilla-hub"

// Files of the etcd peer PKI, under pki/etcd/. The peer CA is not the hub
// CA: the hub CA signs every agent's client certificate, and none of those
// may speak raft to a member.
const (
	etcdPKIDir      = "etcd"
	etcdCACertFile  = "ca.crt"
	etcdCAKeyFile   = "ca.key"
	etcdPeerCert    = "peer.crt"
	etcdPeerKeyFile = "peer.key"
)

// validate says what is wrong with m, in the terms of flotilla-hub's flags.
func (m *EtcdMember) validate() error {
	if m.Name == "" {
		return errors.New("--etcd-name is required with --etcd-initial-cluster")
	}
	if msgs := validation.IsDNS1123Subdomain(m.Name); len(msgs) > 0 {
		return fmt.Errorf("--etcd-name %q: %s", m.Name, strings.Join(msgs, "; "))
	}
	peer, err := httpsURL("--etcd-peer-url", m.PeerURL)
	if err != nil {
		return err
	}
	if m.ListenPeerURL == "" {
		m.ListenPeerURL = "https://" + net.JoinHostPort("0.0.0.0", peer.Port())
	} else if _, err := httpsURL("--etcd-listen-peer-url", m.ListenPeerURL); err != nil {
		return err
	}
	switch m.InitialClusterState {
	case "":
		m.InitialClusterState = ClusterStateNew
	case ClusterStateNew, ClusterStateExisting:
	default:
		return fmt.Errorf("--etcd-initial-cluster-state %q: want %s (the members start together for the first time) or %s (this member joins a running cluster)", m.InitialClusterState, ClusterStateNew, ClusterStateExisting)
	}
	members, err := m.members()
	if err != nil {
		return err
	}
	mine, ok := members[m.Name]
	if !ok {
		return fmt.Errorf("--etcd-initial-cluster does not name this member (--etcd-name %q): list every member as name=https://address:port", m.Name)
	}
	if mine != peer.String() {
		return fmt.Errorf("--etcd-initial-cluster gives member %q the peer URL %s, but --etcd-peer-url is %s: they must be the same", m.Name, mine, peer)
	}
	return nil
}

// members parses InitialCluster into name → peer URL, in order in first.
func (m *EtcdMember) members() (map[string]string, error) {
	out := map[string]string{}
	for entry := range strings.SplitSeq(m.InitialCluster, ",") {
		name, raw, ok := strings.Cut(strings.TrimSpace(entry), "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("--etcd-initial-cluster entry %q is not name=https://address:port", entry)
		}
		u, err := httpsURL("--etcd-initial-cluster member "+name, raw)
		if err != nil {
			return nil, err
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("--etcd-initial-cluster names member %q twice", name)
		}
		out[name] = u.String()
	}
	return out, nil
}

// first is the member listed first in InitialCluster: the one that makes
// the PKI, which the others start from a copy of.
func (m *EtcdMember) first() string {
	name, _, _ := strings.Cut(strings.TrimSpace(strings.Split(m.InitialCluster, ",")[0]), "=")
	return name
}

// makesPKI says whether this member makes the hub's CA and keys: the first
// one listed, when the members start together. A member added to a running
// cluster never does, wherever it is listed: the cluster has a CA already.
func (m *EtcdMember) makesPKI() bool {
	return m.InitialClusterState != ClusterStateExisting && m.Name == m.first()
}

// sharedPKIList is SharedPKIFiles as a sentence.
func sharedPKIList() string {
	files := SharedPKIFiles()
	n := len(files)
	return strings.Join(files[:n-1], ", ") + " and " + files[n-1]
}

// whoHasPKI names where the CA and keys to copy are, for error messages.
func (m *EtcdMember) whoHasPKI() string {
	if m.InitialClusterState == ClusterStateExisting {
		return "a running member"
	}
	return "the first member (" + m.first() + ")"
}

func httpsURL(flag, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Hostname() == "" || u.Port() == "" || (u.Path != "" && u.Path != "/") {
		return nil, fmt.Errorf("%s %q is not https://address:port (peer traffic is always TLS, with certificates from the hub's etcd CA)", flag, raw)
	}
	u.Path = ""
	return u, nil
}

// checkSharedPKI refuses to start a member other than the first without a
// copy of the first member's PKI: it would make a CA of its own, which no
// other member and no agent trusts.
func (m *EtcdMember) checkSharedPKI(pkiDir string) error {
	if m.makesPKI() {
		return nil
	}
	for _, f := range sharedPKIFiles {
		if _, err := os.Stat(filepath.Join(pkiDir, f)); err != nil {
			return fmt.Errorf("%s is missing: every hub member starts from a copy of %s's CA and keys; copy %s from its <data-dir>/pki into %s before the first start (docs/ha.md)", filepath.Join(pkiDir, f), m.whoHasPKI(), sharedPKIList(), pkiDir)
		}
	}
	return nil
}

// ensureEtcdPeerPKI makes the etcd peer CA (on the first member, once) and
// this member's peer certificate, for its peer URL's host, and returns
// etcd's TLS settings for peer traffic.
func (p *pki) ensureEtcdPeerPKI(m *EtcdMember) (transport.TLSInfo, error) {
	dir := p.path(etcdPKIDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return transport.TLSInfo{}, fmt.Errorf("cannot create %s: %w", dir, err)
	}
	caCert := filepath.Join(dir, etcdCACertFile)
	if _, err := os.Stat(caCert); errors.Is(err, os.ErrNotExist) {
		if !m.makesPKI() {
			return transport.TLSInfo{}, fmt.Errorf("%s is missing: copy it and etcd/ca.key from %s", caCert, m.whoHasPKI())
		}
		if err := createCA(dir, etcdCACertFile, etcdCAKeyFile, "flotilla-etcd-ca"); err != nil {
			return transport.TLSInfo{}, err
		}
	}
	ca, err := loadCAFiles(dir, etcdCACertFile, etcdCAKeyFile)
	if err != nil {
		return transport.TLSInfo{}, err
	}
	peer, _ := url.Parse(m.PeerURL)
	hosts, ips := []string{"localhost"}, []net.IP{net.ParseIP("127.0.0.1")}
	if ip := net.ParseIP(peer.Hostname()); ip != nil {
		ips = append(ips, ip)
	} else {
		hosts = append(hosts, peer.Hostname())
	}
	if err := ca.ensurePair(dir, etcdPeerCert, etcdPeerKeyFile, m.Name, hosts, ips, true); err != nil {
		return transport.TLSInfo{}, fmt.Errorf("issue the etcd peer certificate: %w", err)
	}
	return transport.TLSInfo{
		CertFile:       filepath.Join(dir, etcdPeerCert),
		KeyFile:        filepath.Join(dir, etcdPeerKeyFile),
		TrustedCAFile:  caCert,
		ClientCertAuth: true,
	}, nil
}

// configureMember makes cfg a member of m's cluster.
func configureMember(cfg *embed.Config, m *EtcdMember, tls transport.TLSInfo) error {
	peer, err := url.Parse(m.PeerURL)
	if err != nil {
		return err
	}
	listen, err := url.Parse(m.ListenPeerURL)
	if err != nil {
		return err
	}
	cfg.Name = m.Name
	cfg.ListenPeerUrls = []url.URL{*listen}
	cfg.AdvertisePeerUrls = []url.URL{*peer}
	cfg.InitialCluster = m.InitialCluster
	cfg.ClusterState = m.InitialClusterState
	cfg.InitialClusterToken = initialClusterToken
	cfg.PeerTLSInfo = tls
	// Reject a peer whose certificate the etcd CA did not sign for this
	// cluster, whatever its address.
	cfg.PeerTLSInfo.ClientCertAuth = true
	return nil
}
