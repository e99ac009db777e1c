package snapshot

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	etcdutl "go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.uber.org/zap"
	"k8s.io/klog/v2"

	"github.com/flotilla-io/flotilla/hub/controlplane"
)

// RevisionBump is how far a restore moves etcd's revision past the
// snapshot's: more than the writes a hub makes between a snapshot and its
// restore, so that no client ever sees a revision it saw before (the
// figure Kubernetes' documentation gives for etcdutl).
const RevisionBump = 1_000_000_000

// restorePeerURL is the restored member's peer URL. The embedded etcd is
// one member that takes a new peer port at every start; a single member's
// recorded peer URL is never dialled.
const restorePeerURL = "http://127.0.0.1:2380"

// RestoreOptions say which snapshot to restore, and where.
type RestoreOptions struct {
	// File is the snapshot archive.
	File string
	// DataDir is the new hub's --data-dir. It must not exist or be empty,
	// unless Replace is set.
	DataDir string
	// Replace removes what DataDir holds first (never while a hub runs
	// on it).
	Replace bool
	// Member, when set, makes DataDir the data directory of this member
	// of a hub of several embedded etcd members, each restored from the
	// same archive on its own machine. It holds the member's etcd data
	// and the PKI that the members share (the hub CA, the service-account
	// keys, the etcd peer CA), not the snapshot's serving, client or peer
	// certificates, which name the snapshot's hub: the member makes its
	// own at start, as a member started from a copy of the PKI does.
	Member *controlplane.EtcdMember
}

// identityEntry is the hub's identity in the leader election.
const identityEntry = "hub-identity"

// Restore makes DataDir a hub's data directory from a snapshot and returns
// the snapshot's manifest.
func Restore(ctx context.Context, o RestoreOptions) (Manifest, error) {
	if o.Member != nil {
		if err := o.Member.Validate(); err != nil {
			return Manifest{}, err
		}
		if o.Member.InitialClusterState != controlplane.ClusterStateNew {
			return Manifest{}, fmt.Errorf("a restored member starts with its peers as a new cluster: --etcd-initial-cluster-state %s does not apply", o.Member.InitialClusterState)
		}
	}
	lock, err := controlplane.LockDataDir(o.DataDir)
	if err != nil {
		return Manifest{}, err
	}
	defer lock.Close()
	if err := emptyDataDir(o.DataDir, o.Replace); err != nil {
		return Manifest{}, err
	}
	staging, err := os.MkdirTemp(o.DataDir, ".restore-")
	if err != nil {
		return Manifest{}, err
	}
	defer os.RemoveAll(staging)
	m, err := extract(o.File, staging)
	if err != nil {
		return Manifest{}, err
	}
	cfg := etcdutl.RestoreConfig{
		SnapshotPath:        filepath.Join(staging, filepath.FromSlash(etcdEntry)),
		Name:                controlplane.EtcdName,
		OutputDataDir:       controlplane.EtcdDir(o.DataDir),
		PeerURLs:            []string{restorePeerURL},
		InitialCluster:      controlplane.EtcdName + "=" + restorePeerURL,
		InitialClusterToken: "etcd-cluster",
		RevisionBump:        RevisionBump,
		MarkCompacted:       true,
	}
	keep := func(string) bool { return true }
	if mem := o.Member; mem != nil {
		if err := checkMemberArchive(o.File, m); err != nil {
			return Manifest{}, err
		}
		cfg.Name = mem.Name
		cfg.PeerURLs = []string{mem.PeerURL}
		cfg.InitialCluster = mem.InitialCluster
		cfg.InitialClusterToken = clusterToken(m)
		keep = func(p string) bool { return memberKeeps(p, mem.Name == mem.First()) }
	}
	if err := etcdutl.NewV3(zap.NewNop()).Restore(cfg); err != nil {
		return Manifest{}, fmt.Errorf("restore etcd's data into %s: %w", controlplane.EtcdDir(o.DataDir), err)
	}
	for _, e := range m.Entries {
		if e.Path == etcdEntry || !keep(e.Path) {
			continue
		}
		dst := filepath.Join(o.DataDir, filepath.FromSlash(e.Path))
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return Manifest{}, err
		}
		if err := os.Rename(filepath.Join(staging, filepath.FromSlash(e.Path)), dst); err != nil {
			return Manifest{}, err
		}
	}
	if mem := o.Member; mem != nil && mem.Name == mem.First() && !m.HasEtcdCA() {
		// An archive of an older flotilla-hub may hold no etcd CA: the
		// first member makes it, as on a first start, and the others take
		// a copy (Restore's caller says so).
		if err := controlplane.CreateEtcdCA(filepath.Join(o.DataDir, "pki")); err != nil {
			return Manifest{}, err
		}
	}
	klog.FromContext(ctx).V(1).Info("Snapshot restored", "dataDir", o.DataDir, "created", m.Created)
	return m, nil
}

// Has reports whether the archive holds the entry p.
func (m Manifest) Has(p string) bool {
	return slices.ContainsFunc(m.Entries, func(e Entry) bool { return e.Path == p })
}

// HasEtcdCA reports whether the archive holds an etcd peer CA, which every
// member restored from it shares.
func (m Manifest) HasEtcdCA() bool {
	cert, key := controlplane.EtcdCAFiles()
	return m.Has(pkiEntry(cert)) && m.Has(pkiEntry(key))
}

// checkMemberArchive refuses an archive that lacks the hub CA or the
// service-account keys, which a member cannot make for itself.
func checkMemberArchive(file string, m Manifest) error {
	cert, key := controlplane.EtcdCAFiles()
	for _, f := range controlplane.SharedPKIFiles() {
		if f == cert || f == key {
			continue
		}
		if !m.Has(pkiEntry(f)) {
			return fmt.Errorf("%s holds no %s: it is not the snapshot of an embedded hub, and no member can be made from it", file, pkiEntry(f))
		}
	}
	return nil
}

// memberKeeps says whether a member takes the archive's file p: the PKI
// that every member shares, and, for the first member only, the hub's
// identity in the leader election (two processes with one identity would
// both think they lead).
func memberKeeps(p string, first bool) bool {
	if p == identityEntry {
		return first
	}
	return slices.ContainsFunc(controlplane.SharedPKIFiles(), func(f string) bool { return p == pkiEntry(f) })
}

// clusterToken is the etcd cluster token of the members restored from m:
// the same on every machine that restores this archive, so that they
// compute the same member and cluster IDs, and new for every archive, so
// that a member of the lost cluster (or of another restore) is refused as
// being of another cluster.
func clusterToken(m Manifest) string {
	for _, e := range m.Entries {
		if e.Path == etcdEntry && len(e.SHA256) >= 16 {
			return "flotilla-hub-restore-" + e.SHA256[:16]
		}
	}
	return "flotilla-hub-restore-" + m.Created.Format("20060102T150405Z")
}

// emptyDataDir checks that dir holds nothing but the lock, or removes what it
// holds when replace is set.
func emptyDataDir(dir string, replace bool) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() == ".lock" {
			continue
		}
		if !replace {
			return fmt.Errorf("--data-dir %s is not empty (it holds %s): restore into a new directory, or give --replace to remove what it holds", dir, e.Name())
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// extract reads the archive into dir, checking every entry against the
// manifest, and fails unless all the manifest's entries were there.
func extract(file, dir string) (Manifest, error) {
	f, err := os.Open(file)
	if err != nil {
		return Manifest{}, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return Manifest{}, fmt.Errorf("%s is not a hub snapshot: %w", file, err)
	}
	tr := tar.NewReader(gz)
	h, err := tr.Next()
	if err != nil || h.Name != manifestName {
		return Manifest{}, fmt.Errorf("%s is not a hub snapshot: it does not start with %s", file, manifestName)
	}
	var m Manifest
	if err := json.NewDecoder(io.LimitReader(tr, 1<<20)).Decode(&m); err != nil {
		return Manifest{}, fmt.Errorf("%s: read %s: %w", file, manifestName, err)
	}
	if m.FormatVersion != FormatVersion {
		return Manifest{}, fmt.Errorf("%s has format version %d; this flotilla-hub reads version %d", file, m.FormatVersion, FormatVersion)
	}
	want := map[string]Entry{}
	for _, e := range m.Entries {
		if !local(e.Path) {
			return Manifest{}, fmt.Errorf("%s names %q, outside the data directory", file, e.Path)
		}
		want[e.Path] = e
	}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Manifest{}, fmt.Errorf("%s is truncated or damaged: %w", file, err)
		}
		e, ok := want[h.Name]
		if !ok {
			return Manifest{}, fmt.Errorf("%s holds %q, which its manifest does not list", file, h.Name)
		}
		delete(want, h.Name)
		if err := writeChecked(tr, e, filepath.Join(dir, filepath.FromSlash(e.Path))); err != nil {
			return Manifest{}, fmt.Errorf("%s: %w", file, err)
		}
	}
	for p := range want {
		return Manifest{}, fmt.Errorf("%s lacks %s, which its manifest lists: the archive is incomplete", file, p)
	}
	return m, nil
}

// local reports whether p stays inside the directory it is extracted to.
func local(p string) bool {
	return p != "" && !path.IsAbs(p) && path.Clean(p) == p && p != ".." && !strings.HasPrefix(p, "../")
}

// writeChecked writes e's content from r to dst and checks its size and sum.
func writeChecked(r io.Reader, e Entry, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, e.Mode.Perm()|0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), r)
	if err != nil {
		return fmt.Errorf("read %s: %w", e.Path, err)
	}
	if n != e.Size || hex.EncodeToString(h.Sum(nil)) != e.SHA256 {
		return fmt.Errorf("%s does not match its checksum in the manifest: the archive is damaged", e.Path)
	}
	return f.Sync()
}
