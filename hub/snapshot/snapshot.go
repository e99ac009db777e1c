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
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	etcdsnapshot "go.etcd.io/etcd/client/v3/snapshot"
	"go.uber.org/zap"
	"k8s.io/klog/v2"

	"github.com/flotilla-io/flotilla/hub/controlplane"
	"github.com/flotilla-io/flotilla/internal/version"
)

// FormatVersion is the archive layout this package writes and reads.
const FormatVersion = 1

const (
	manifestName = "manifest.json"
	// etcdEntry is the etcd snapshot's name inside the archive.
	etcdEntry = "etcd/snapshot.db"
)

// kept are the data directory's entries that a snapshot holds besides etcd.
// hub-identity makes the restored hub take back the snapshot's leader
// lease at once.
var kept = []string{"pki", "admin.kubeconfig", "hub-identity"}

// Manifest describes a snapshot archive.
type Manifest struct {
	FormatVersion int       `json:"formatVersion"`
	Created       time.Time `json:"created"`
	// HubVersion is the flotilla-hub that took the snapshot.
	HubVersion string `json:"hubVersion"`
	// EtcdStorageVersion is the storage version etcd reported.
	EtcdStorageVersion string `json:"etcdStorageVersion,omitempty"`
	// Entries are every archive entry but the manifest, in archive order.
	Entries []Entry `json:"entries"`
}

// Entry is one file of the archive.
type Entry struct {
	Path   string      `json:"path"`
	Size   int64       `json:"size"`
	Mode   fs.FileMode `json:"mode"`
	SHA256 string      `json:"sha256"`
}

// Size is the total size of the entries, uncompressed.
func (m Manifest) Size() int64 {
	var n int64
	for _, e := range m.Entries {
		n += e.Size
	}
	return n
}

// SaveOptions say what to back up, and where to.
type SaveOptions struct {
	// DataDir is the hub's --data-dir: the PKI comes from there, and the
	// etcd of the hub running on it (or, when none runs, its etcd data).
	DataDir string
	// EtcdServers, when set, are the etcd the hub runs against
	// (--etcd-servers) instead of its embedded one; the snapshot is asked
	// of one member, the first that answers.
	EtcdServers []string
	// EtcdTLS is how to reach EtcdServers over TLS (the hub's --etcd-cafile,
	// --etcd-certfile, --etcd-keyfile).
	EtcdTLS controlplane.EtcdClientTLS
	// File is the archive to write; it is replaced only once complete.
	File string
}

// Save writes a snapshot archive of a hub and returns its manifest.
func Save(ctx context.Context, o SaveOptions) (Manifest, error) {
	logger := klog.FromContext(ctx)
	if _, err := os.Stat(filepath.Join(o.DataDir, "pki", "ca.crt")); err != nil {
		return Manifest{}, fmt.Errorf("--data-dir %s holds no hub (no pki/ca.crt): %w", o.DataDir, err)
	}
	endpoints := o.EtcdServers
	if len(endpoints) == 0 {
		url, closeEtcd, err := controlplane.OpenEtcd(ctx, o.DataDir)
		if err != nil {
			return Manifest{}, err
		}
		defer closeEtcd()
		endpoints = []string{url}
	}
	tmp, err := os.MkdirTemp(filepath.Dir(o.File), "."+filepath.Base(o.File)+".tmp-")
	if err != nil {
		return Manifest{}, fmt.Errorf("cannot write beside %s: %w", o.File, err)
	}
	defer os.RemoveAll(tmp)
	db := filepath.Join(tmp, "snapshot.db")
	tlsConfig, err := o.EtcdTLS.ClientConfig()
	if err != nil {
		return Manifest{}, err
	}
	// etcd takes a snapshot from one member only: ask each in turn.
	var storage string
	var errs []error
	for _, endpoint := range endpoints {
		cfg := clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 10 * time.Second, Context: ctx, TLS: tlsConfig}
		if err = answers(ctx, cfg); err == nil {
			storage, err = etcdsnapshot.SaveWithVersion(ctx, zap.NewNop(), cfg, db)
		}
		if err == nil {
			logger.V(1).Info("etcd snapshot taken", "endpoint", endpoint, "storageVersion", storage)
			break
		}
		errs = append(errs, fmt.Errorf("%s: %w", endpoint, err))
	}
	if err != nil {
		return Manifest{}, fmt.Errorf("snapshot etcd: no member of %s gave one: %w", strings.Join(endpoints, ","), errors.Join(errs...))
	}

	m := Manifest{FormatVersion: FormatVersion, Created: time.Now().UTC().Truncate(time.Second), HubVersion: version.Version, EtcdStorageVersion: storage}
	sources := map[string]string{etcdEntry: db}
	dbEntry, err := describe(etcdEntry, db)
	if err != nil {
		return Manifest{}, err
	}
	m.Entries = append(m.Entries, dbEntry)
	files, err := dataFiles(o.DataDir)
	if err != nil {
		return Manifest{}, err
	}
	for _, rel := range files {
		sources[rel] = filepath.Join(o.DataDir, filepath.FromSlash(rel))
	}
	if err := addEtcdCA(sources, tmp); err != nil {
		return Manifest{}, err
	}
	files = files[:0]
	for rel := range sources {
		if rel != etcdEntry {
			files = append(files, rel)
		}
	}
	sort.Strings(files)
	for _, rel := range files {
		src := sources[rel]
		e, err := describe(rel, src)
		if err != nil {
			return Manifest{}, err
		}
		m.Entries = append(m.Entries, e)
	}
	archive := filepath.Join(tmp, "archive")
	if err := writeArchive(archive, m, sources); err != nil {
		return Manifest{}, err
	}
	if err := os.Rename(archive, o.File); err != nil {
		return Manifest{}, fmt.Errorf("write %s: %w", o.File, err)
	}
	return m, nil
}

// addEtcdCA adds an etcd peer CA to the files of a snapshot whose hub has
// none (one process, or on --etcd-servers), made in tmp, never in the hub's
// data directory. Every member of a hub restored from the archive takes
// its etcd CA from it: each machine restores on its own, and a CA made at
// restore would differ on each.
func addEtcdCA(sources map[string]string, tmp string) error {
	cert, key := controlplane.EtcdCAFiles()
	if _, ok := sources[pkiEntry(cert)]; ok {
		return nil
	}
	pki := filepath.Join(tmp, "pki")
	if err := controlplane.CreateEtcdCA(pki); err != nil {
		return err
	}
	for _, f := range []string{cert, key} {
		sources[pkiEntry(f)] = filepath.Join(pki, filepath.FromSlash(f))
	}
	return nil
}

// pkiEntry is the archive entry of f, a path relative to pki/.
func pkiEntry(f string) string { return "pki/" + f }

// dataFiles lists the regular files of the kept entries of dataDir, as
// slash-separated paths relative to it, sorted.
func dataFiles(dataDir string) ([]string, error) {
	var out []string
	for _, top := range kept {
		err := filepath.WalkDir(filepath.Join(dataDir, top), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) && path == filepath.Join(dataDir, top) {
					return nil
				}
				return err
			}
			// Temporary files of an atomic write in progress are not state.
			if !d.Type().IsRegular() || strings.Contains(d.Name(), ".tmp-") {
				return nil
			}
			rel, err := filepath.Rel(dataDir, path)
			if err != nil {
				return err
			}
			out = append(out, filepath.ToSlash(rel))
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", dataDir, err)
		}
	}
	sort.Strings(out)
	return out, nil
}

// describe is the manifest entry of file src, stored as name.
func describe(name, src string) (Entry, error) {
	f, err := os.Open(src)
	if err != nil {
		return Entry{}, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return Entry{}, err
	}
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return Entry{}, fmt.Errorf("read %s: %w", src, err)
	}
	return Entry{Path: name, Size: n, Mode: info.Mode().Perm(), SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// writeArchive writes the manifest, then each entry from its source, and
// syncs the file.
func writeArchive(path string, m Manifest, sources map[string]string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	manifest, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: manifestName, Mode: 0o600, Size: int64(len(manifest)), ModTime: m.Created}); err != nil {
		return err
	}
	if _, err := tw.Write(manifest); err != nil {
		return err
	}
	for _, e := range m.Entries {
		if err := copyEntry(tw, e, sources[e.Path], m.Created); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := gz.Close(); err != nil {
		return err
	}
	return f.Sync()
}

// copyEntry appends e from src; the file must still be what was hashed.
func copyEntry(tw *tar.Writer, e Entry, src string, modTime time.Time) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := tw.WriteHeader(&tar.Header{Name: e.Path, Mode: int64(e.Mode), Size: e.Size, ModTime: modTime}); err != nil {
		return err
	}
	h := sha256.New()
	if _, err := io.CopyN(io.MultiWriter(tw, h), f, e.Size); err != nil {
		return fmt.Errorf("%s changed while the snapshot was taken: %w", src, err)
	}
	if hex.EncodeToString(h.Sum(nil)) != e.SHA256 {
		return fmt.Errorf("%s changed while the snapshot was taken: take it again", src)
	}
	return nil
}

// answers asks the etcd member of cfg for its status, within the dial
// timeout: the snapshot call itself waits for a member that does not
// answer, and a snapshot of a large store may take long, so only this
// first question is bounded.
func answers(ctx context.Context, cfg clientv3.Config) error {
	c, err := clientv3.New(cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	defer cancel()
	_, err = c.Status(ctx, cfg.Endpoints[0])
	return err
}
