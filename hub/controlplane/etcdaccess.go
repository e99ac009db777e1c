package controlplane

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/uuid"
	certutil "k8s.io/client-go/util/cert"
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

// ErrNotRunning says that no hub runs on a data directory.
var ErrNotRunning = errors.New("no hub runs on it")

// RunningEtcd returns the client URL of the embedded etcd of the hub that
// runs on dataDir, on this machine. Unlike OpenEtcd it never starts an etcd:
// a stopped member of a cluster cannot serve alone.
func RunningEtcd(dataDir string) (string, error) {
	if _, err := os.Stat(dataDir); err != nil {
		return "", fmt.Errorf("--data-dir %s: %w (give the --data-dir of a hub running on this machine)", dataDir, err)
	}
	lock, err := lockDataDir(dataDir)
	if err == nil {
		lock.Close()
		return "", fmt.Errorf("%s: %w (start the hub first, or give the --data-dir of the hub running on this machine)", dataDir, ErrNotRunning)
	}
	if !errors.Is(err, ErrInUse) {
		return "", err
	}
	data, err := os.ReadFile(filepath.Join(dataDir, etcdURLFile))
	if err != nil {
		return "", fmt.Errorf("the hub running on %s does not say where its etcd listens (%w): it is either still starting (try again once it is ready) or runs with --etcd-servers, which are no members of its own", dataDir, err)
	}
	return strings.TrimSpace(string(data)), nil
}

// EtcdPeerTLS returns the etcd peer certificate, key and CA of the member
// whose data directory is dataDir: what another member accepts on its peer
// URL.
func EtcdPeerTLS(dataDir string) (certFile, keyFile, caFile string) {
	dir := filepath.Join(dataDir, "pki", etcdPKIDir)
	return filepath.Join(dir, etcdPeerCert), filepath.Join(dir, etcdPeerKeyFile), filepath.Join(dir, etcdCACertFile)
}

// ExtraServingSANs returns the DNS names and IP addresses of the API server
// serving certificate in dataDir other than the ones every hub's carries:
// its advertise address and --tls-san, which a further member repeats.
func ExtraServingSANs(dataDir string) ([]string, error) {
	path := filepath.Join(dataDir, "pki", servingCertFile)
	certs, err := certutil.CertsFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the serving certificate %s: %w", path, err)
	}
	var out []string
	for _, h := range certs[0].DNSNames {
		if !slices.Contains(servingHosts(), h) && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	for _, ip := range certs[0].IPAddresses {
		if !ip.IsLoopback() && !ip.Equal(net.ParseIP(firstServiceIP)) && !ip.IsUnspecified() && !slices.Contains(out, ip.String()) {
			out = append(out, ip.String())
		}
	}
	return out, nil
}

// ParsePeerURL checks that raw is an etcd peer URL as the members take it,
// https://address:port, saying which flag was wrong.
func ParsePeerURL(flag, raw string) (*url.URL, error) { return httpsURL(flag, raw) }
