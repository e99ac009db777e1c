package controlplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/util/uuid"
)

// EtcdName is the embedded etcd member's name, which a restored member must
// carry too.
const EtcdName = "flotilla"

// etcdURLFile, in the data directory, holds the client URL of the running
// hub's embedded etcd (it listens on a port chosen at start).
const etcdURLFile = "etcd.url"

// ErrInUse says that a running hub holds the data directory.
var ErrInUse = errors.New("in use by another hub")

// EtcdDir is the embedded etcd's data directory under a hub's dataDir.
func EtcdDir(dataDir string) string { return filepath.Join(dataDir, "etcd") }

// OpenEtcd returns the client URL of the embedded etcd of the hub whose data
// directory is dataDir: the running hub's, or, when no hub runs on it, an
// etcd started here on its data, which close stops (then dataDir stays
// locked until close). Either way the caller reads a consistent store.
func OpenEtcd(ctx context.Context, dataDir string) (url string, close func(), err error) {
	lock, err := lockDataDir(dataDir)
	if errors.Is(err, ErrInUse) {
		data, err := os.ReadFile(filepath.Join(dataDir, etcdURLFile))
		if err != nil {
			return "", nil, fmt.Errorf("the hub running on %s does not say where its etcd listens (%w): is it a hub with --etcd-servers? Then give those", dataDir, err)
		}
		return strings.TrimSpace(string(data)), func() {}, nil
	}
	if err != nil {
		return "", nil, err
	}
	if _, err := os.Stat(filepath.Join(EtcdDir(dataDir), "member")); err != nil {
		lock.Close()
		return "", nil, fmt.Errorf("%s holds no hub's etcd data: %w", dataDir, err)
	}
	e, url, err := startEtcd(ctx, EtcdName, EtcdDir(dataDir))
	if err != nil {
		lock.Close()
		return "", nil, err
	}
	return url, func() { e.Close(); lock.Close() }, nil
}

// LockDataDir takes dataDir (creating it) for a restore: it fails with
// ErrInUse while a hub runs on it. Close the file to release it.
func LockDataDir(dataDir string) (*os.File, error) { return lockDataDir(dataDir) }

// identityFile, in the data directory, names the hub in its leader
// election; a snapshot keeps it.
const identityFile = "hub-identity"

// HubIdentity returns the hub's identity kept in dataDir, creating it on
// first use.
func HubIdentity(dataDir string) (string, error) {
	path := filepath.Join(dataDir, identityFile)
	data, err := os.ReadFile(path)
	if err == nil && len(strings.TrimSpace(string(data))) > 0 {
		return strings.TrimSpace(string(data)), nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	host, _ := os.Hostname()
	id := host + "_" + string(uuid.NewUUID())
	if err := writeFile(path, []byte(id+"\n"), 0o600); err != nil {
		return "", err
	}
	return id, nil
}
