package controlplane

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEtcdMemberValidate(t *testing.T) {
	const cluster = "a=https://10.0.0.1:2380,b=https://10.0.0.2:2380,c=https://10.0.0.3:2380"
	cases := []struct {
		name string
		m    EtcdMember
		want string // "" when valid
	}{
		{"valid", EtcdMember{Name: "b", PeerURL: "https://10.0.0.2:2380", InitialCluster: cluster}, ""},
		{"no name", EtcdMember{PeerURL: "https://10.0.0.2:2380", InitialCluster: cluster}, "--etcd-name is required"},
		{"not listed", EtcdMember{Name: "d", PeerURL: "https://10.0.0.4:2380", InitialCluster: cluster}, "does not name this member"},
		{"other peer URL", EtcdMember{Name: "b", PeerURL: "https://10.0.0.9:2380", InitialCluster: cluster}, "must be the same"},
		{"plain http", EtcdMember{Name: "b", PeerURL: "http://10.0.0.2:2380", InitialCluster: cluster}, "is not https://address:port"},
		{"no port", EtcdMember{Name: "a", PeerURL: "https://10.0.0.1", InitialCluster: "a=https://10.0.0.1"}, "is not https://address:port"},
		{"bad entry", EtcdMember{Name: "a", PeerURL: "https://10.0.0.1:2380", InitialCluster: "a=https://10.0.0.1:2380,b"}, "is not name=https://address:port"},
		{"twice", EtcdMember{Name: "a", PeerURL: "https://10.0.0.1:2380", InitialCluster: "a=https://10.0.0.1:2380,a=https://10.0.0.2:2380"}, "names member \"a\" twice"},
		{"bad state", EtcdMember{Name: "b", PeerURL: "https://10.0.0.2:2380", InitialCluster: cluster, InitialClusterState: "old"}, "want new"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.m.validate()
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("want valid, got %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("want an error saying %q, got %v", c.want, err)
			}
		})
	}
	m := EtcdMember{Name: "b", PeerURL: "https://10.0.0.2:2380", InitialCluster: cluster}
	if err := m.validate(); err != nil {
		t.Fatal(err)
	}
	if m.ListenPeerURL != "https://0.0.0.0:2380" || m.InitialClusterState != ClusterStateNew {
		t.Fatalf("defaults: listen %q, state %q", m.ListenPeerURL, m.InitialClusterState)
	}
}

// A member other than the first refuses to start without the first one's
// CA and keys, naming what to copy; the first makes them.
func TestEtcdMemberSharedPKI(t *testing.T) {
	const cluster = "a=https://10.0.0.1:2380,b=https://10.0.0.2:2380"
	first := &EtcdMember{Name: "a", PeerURL: "https://10.0.0.1:2380", InitialCluster: cluster}
	second := &EtcdMember{Name: "b", PeerURL: "https://10.0.0.2:2380", InitialCluster: cluster}
	dir := filepath.Join(t.TempDir(), "pki")
	if err := second.checkSharedPKI(dir); err == nil || !strings.Contains(err.Error(), "copy ca.crt, ca.key, sa.key, sa.pub, etcd/ca.crt and etcd/ca.key") {
		t.Fatalf("want the files to copy named, got %v", err)
	}
	if err := first.checkSharedPKI(dir); err != nil {
		t.Fatal(err)
	}
	// A member added to a running cluster never makes a CA, even when it
	// is named first: the cluster has one.
	joining := &EtcdMember{Name: "a", PeerURL: "https://10.0.0.1:2380", InitialCluster: cluster, InitialClusterState: ClusterStateExisting}
	if err := joining.checkSharedPKI(dir); err == nil || !strings.Contains(err.Error(), "a running member's CA and keys") {
		t.Fatalf("want a joining member refused without the CA, got %v", err)
	}
	p, err := ensurePKI(dir, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.ensureEtcdPeerPKI(first); err != nil {
		t.Fatal(err)
	}
	// The second member's directory, from a copy of the six files only.
	copyDir := filepath.Join(t.TempDir(), "pki")
	for _, f := range []string{"ca.crt", "ca.key", "sa.key", "sa.pub", "etcd/ca.crt", "etcd/ca.key"} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(copyDir, f)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(copyDir, f), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := second.checkSharedPKI(copyDir); err != nil {
		t.Fatal(err)
	}
	p2, err := ensurePKI(copyDir, nil, nil)
	if err != nil {
		t.Fatalf("a copied CA makes its own client certificates: %v", err)
	}
	tls, err := p2.ensureEtcdPeerPKI(second)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{tls.CertFile, tls.KeyFile, filepath.Join(copyDir, adminCertFile), filepath.Join(copyDir, kcmCertFile)} {
		if _, err := os.Stat(f); err != nil {
			t.Fatal(err)
		}
	}
	if !tls.ClientCertAuth || tls.TrustedCAFile != filepath.Join(copyDir, "etcd", "ca.crt") {
		t.Fatalf("peers must present a certificate of the etcd CA: %+v", tls)
	}
}
