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
}

// Restore makes DataDir a hub's data directory from a snapshot and returns
// the snapshot's manifest.
func Restore(ctx context.Context, o RestoreOptions) (Manifest, error) {
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
	err = etcdutl.NewV3(zap.NewNop()).Restore(etcdutl.RestoreConfig{
		SnapshotPath:        filepath.Join(staging, filepath.FromSlash(etcdEntry)),
		Name:                controlplane.EtcdName,
		OutputDataDir:       controlplane.EtcdDir(o.DataDir),
		PeerURLs:            []string{restorePeerURL},
		InitialCluster:      controlplane.EtcdName + "=" + restorePeerURL,
		InitialClusterToken: "etcd-cluster",
		RevisionBump:        RevisionBump,
		MarkCompacted:       true,
	})
	if err != nil {
		return Manifest{}, fmt.Errorf("restore etcd's data into %s: %w", controlplane.EtcdDir(o.DataDir), err)
	}
	for _, e := range m.Entries {
		if e.Path == etcdEntry {
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
	klog.FromContext(ctx).V(1).Info("Snapshot restored", "dataDir", o.DataDir, "created", m.Created)
	return m, nil
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
