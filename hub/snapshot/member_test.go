package snapshot

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	etcdsnapshot "go.etcd.io/etcd/client/v3/snapshot"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/hub/controlplane"
)

// etcdSnapshot writes a snapshot of a fresh single-member etcd holding one
// key, as `snapshot save` takes of a hub's.
func etcdSnapshot(t *testing.T) string {
	t.Helper()
	cfg := embed.NewConfig()
	cfg.Dir = filepath.Join(t.TempDir(), "etcd")
	cfg.LogLevel = "error"
	for _, u := range []*[]url.URL{&cfg.ListenClientUrls, &cfg.AdvertiseClientUrls, &cfg.ListenPeerUrls, &cfg.AdvertisePeerUrls} {
		*u = []url.URL{{Scheme: "http", Host: "127.0.0.1:0"}}
	}
	cfg.InitialCluster = cfg.Name + "=http://127.0.0.1:0"
	cfg.ListenMetricsUrls = nil
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(30 * time.Second):
		t.Fatal("etcd not ready")
	}
	endpoint := e.Clients[0].Addr().String()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Put(t.Context(), "/registry/k", "v"); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "snapshot.db")
	if _, err := etcdsnapshot.SaveWithVersion(t.Context(), zap.NewNop(), clientv3.Config{Endpoints: []string{endpoint}}, db); err != nil {
		t.Fatal(err)
	}
	return db
}

// hubArchive writes an archive with a real etcd snapshot and the PKI files
// of a single-process hub (without an etcd CA unless withEtcdCA).
func hubArchive(t *testing.T, withEtcdCA bool) string {
	t.Helper()
	db, err := os.ReadFile(etcdSnapshot(t))
	if err != nil {
		t.Fatal(err)
	}
	files := []entryFile{{etcdEntry, string(db)}}
	for _, f := range []string{"pki/ca.crt", "pki/ca.key", "pki/sa.key", "pki/sa.pub", "pki/apiserver.crt", "pki/apiserver.key",
		"pki/admin.crt", "pki/admin.key", "pki/webhook/tls.crt", "admin.kubeconfig", "hub-identity"} {
		files = append(files, entryFile{f, "content of " + f})
	}
	if withEtcdCA {
		files = append(files, entryFile{"pki/etcd/ca.crt", "etcd ca"}, entryFile{"pki/etcd/ca.key", "etcd ca key"}, entryFile{"pki/etcd/peer.crt", "peer of another host"})
	}
	return writeTestArchive(t, files, nil)
}

const testCluster = "hub-1=https://127.0.0.1:12380,hub-2=https://127.0.0.1:22380,hub-3=https://127.0.0.1:32380"

func member(name, port string) *controlplane.EtcdMember {
	return &controlplane.EtcdMember{Name: name, PeerURL: "https://127.0.0.1:" + port, InitialCluster: testCluster}
}

func exists(t *testing.T, path string) bool {
	t.Helper()
	_, err := os.Stat(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return err == nil
}

func TestRestoreMemberTakesTheSharedPKIOnly(t *testing.T) {
	archive := hubArchive(t, true)
	for _, tt := range []struct {
		m        *controlplane.EtcdMember
		identity bool
	}{
		{member("hub-1", "12380"), true},
		{member("hub-2", "22380"), false},
	} {
		t.Run(tt.m.Name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			if _, err := Restore(t.Context(), RestoreOptions{File: archive, DataDir: dir, Member: tt.m}); err != nil {
				t.Fatalf("Restore: %v", err)
			}
			for _, f := range []string{"pki/ca.crt", "pki/ca.key", "pki/sa.key", "pki/sa.pub", "pki/etcd/ca.crt", "pki/etcd/ca.key", "etcd/member/snap/db"} {
				if !exists(t, filepath.Join(dir, f)) {
					t.Errorf("%s is missing", f)
				}
			}
			for _, f := range []string{"pki/apiserver.crt", "pki/apiserver.key", "pki/admin.crt", "pki/webhook/tls.crt", "pki/etcd/peer.crt", "admin.kubeconfig"} {
				if exists(t, filepath.Join(dir, f)) {
					t.Errorf("%s was restored: the member makes its own", f)
				}
			}
			if got := exists(t, filepath.Join(dir, "hub-identity")); got != tt.identity {
				t.Errorf("hub-identity restored = %v, want %v", got, tt.identity)
			}
		})
	}
}

func TestRestoreMemberOfAnArchiveWithoutEtcdCA(t *testing.T) {
	archive := hubArchive(t, false)
	first := filepath.Join(t.TempDir(), "hub-1")
	if _, err := Restore(t.Context(), RestoreOptions{File: archive, DataDir: first, Member: member("hub-1", "12380")}); err != nil {
		t.Fatalf("Restore: %v", err)
	}
	if !exists(t, filepath.Join(first, "pki", "etcd", "ca.key")) {
		t.Error("the first member made no etcd CA for the others to copy")
	}
	second := filepath.Join(t.TempDir(), "hub-2")
	m, err := Restore(t.Context(), RestoreOptions{File: archive, DataDir: second, Member: member("hub-2", "22380")})
	if err != nil {
		t.Fatalf("Restore: %v", err)
	}
	if m.HasEtcdCA() || exists(t, filepath.Join(second, "pki", "etcd", "ca.crt")) {
		t.Error("a member other than the first made an etcd CA of its own")
	}
}

func TestRestoreMemberRefusesBadFlagsBeforeWriting(t *testing.T) {
	tests := []struct {
		name    string
		m       *controlplane.EtcdMember
		wantErr string
	}{
		{"peer URL not the list's", member("hub-2", "12380"), `--etcd-initial-cluster gives member "hub-2" the peer URL https://127.0.0.1:22380, but --etcd-peer-url is https://127.0.0.1:12380`},
		{"not in the list", member("hub-4", "42380"), `does not name this member (--etcd-name "hub-4")`},
		{"no name", &controlplane.EtcdMember{InitialCluster: testCluster}, "--etcd-name is required"},
		{"plain http", &controlplane.EtcdMember{Name: "a", PeerURL: "http://127.0.0.1:1", InitialCluster: "a=http://127.0.0.1:1"}, "is not https://address:port"},
		{"joining state", &controlplane.EtcdMember{Name: "hub-1", PeerURL: "https://127.0.0.1:12380", InitialCluster: testCluster, InitialClusterState: controlplane.ClusterStateExisting}, "starts with its peers as a new cluster"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			_, err := Restore(t.Context(), RestoreOptions{File: "does-not-matter.tar.gz", DataDir: dir, Member: tt.m})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Restore error = %v, want one containing %q", err, tt.wantErr)
			}
			if exists(t, dir) {
				t.Error("the data directory was created for flags that cannot work")
			}
		})
	}
}

func TestRestoreMemberRefusesAnArchiveWithoutTheHubCA(t *testing.T) {
	db, err := os.ReadFile(etcdSnapshot(t))
	if err != nil {
		t.Fatal(err)
	}
	archive := writeTestArchive(t, []entryFile{{etcdEntry, string(db)}, {"pki/ca.crt", "ca"}}, nil)
	_, err = Restore(t.Context(), RestoreOptions{File: archive, DataDir: t.TempDir(), Member: member("hub-1", "12380")})
	if err == nil || !strings.Contains(err.Error(), "holds no pki/ca.key") {
		t.Fatalf("Restore error = %v", err)
	}
}

func TestClusterTokenIsTheArchives(t *testing.T) {
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	a := Manifest{Entries: []Entry{{Path: etcdEntry, SHA256: sum("one")}}}
	b := Manifest{Entries: []Entry{{Path: etcdEntry, SHA256: sum("two")}}}
	if clusterToken(a) != clusterToken(a) || clusterToken(a) == clusterToken(b) {
		t.Fatalf("tokens %q, %q: want one per archive, the same on every machine", clusterToken(a), clusterToken(b))
	}
}

func TestAddEtcdCA(t *testing.T) {
	tmp := t.TempDir()
	sources := map[string]string{"pki/ca.crt": "/x"}
	if err := addEtcdCA(sources, tmp); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"pki/etcd/ca.crt", "pki/etcd/ca.key"} {
		if !exists(t, sources[p]) || !strings.HasPrefix(sources[p], tmp) {
			t.Errorf("%s = %q: want a new file under %s", p, sources[p], tmp)
		}
	}
	kept := map[string]string{"pki/etcd/ca.crt": "/hub/pki/etcd/ca.crt", "pki/etcd/ca.key": "/hub/pki/etcd/ca.key"}
	if err := addEtcdCA(kept, t.TempDir()); err != nil || kept["pki/etcd/ca.crt"] != "/hub/pki/etcd/ca.crt" {
		t.Fatalf("a hub's own etcd CA was replaced: %v, %v", kept, err)
	}
}
