package controlplane

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/klog/v2"
)

// etcdStartTimeout bounds how long a member may take to become ready; a
// healthy single member on local disk is ready in well under a second.
const etcdStartTimeout = 60 * time.Second

// etcdJoinTimeout bounds how long a member added to a running cluster may
// take to become ready: it receives the whole store from the leader first.
const etcdJoinTimeout = 10 * time.Minute

// startEtcd runs a single-member etcd on loopback, storing its data in dir.
// It returns the client URL the API server should use.
func startEtcd(ctx context.Context, name, dir string) (*embed.Etcd, string, error) {
	return startEtcdWith(ctx, name, dir, nil)
}

// startEtcdWith is startEtcd with configure, when set, changing the
// configuration last (to make the etcd a member of a cluster).
func startEtcdWith(ctx context.Context, name, dir string, configure func(*embed.Config) error) (*embed.Etcd, string, error) {
	if err := checkEtcdData(dir); err != nil {
		return nil, "", err
	}
	var (
		e                  *embed.Etcd
		cfg                *embed.Config
		clientURL, peerURL url.URL
		joining            bool
	)
	// etcd binds the ports freePort found after freePort let them go, and
	// another process can take one in between (an outbound connection is
	// given a port from the same range): then the ports are picked again.
	for attempt := 1; ; attempt++ {
		clientPort, err := freePort()
		if err != nil {
			return nil, "", err
		}
		peerPort, err := freePort()
		if err != nil {
			return nil, "", err
		}
		clientURL = url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", clientPort)}
		peerURL = url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", peerPort)}
		if cfg, err = etcdConfig(name, dir, clientURL, peerURL, configure); err != nil {
			return nil, "", err
		}
		// A member added to a running cluster joins it on its first start,
		// with no data yet; later starts are restarts.
		_, statErr := os.Stat(filepath.Join(dir, "member"))
		joining = cfg.ClusterState == embed.ClusterStateFlagExisting && errors.Is(statErr, os.ErrNotExist)
		e, err = embed.StartEtcd(cfg)
		if err == nil {
			break
		}
		if errors.Is(err, syscall.EADDRINUSE) && attempt < etcdPortAttempts {
			klog.FromContext(ctx).Info("A port picked for etcd was taken before etcd bound it; picking others", "err", err)
			continue
		}
		if joining {
			return nil, "", fmt.Errorf("start etcd in %s as a member added to a running cluster: %w (was it added with flotilla-hub member add, with this peer URL, and do the members of --etcd-initial-cluster answer on their peer URLs?)", dir, err)
		}
		return nil, "", fmt.Errorf("start etcd in %s: %w", dir, err)
	}
	timeout := etcdStartTimeout
	if joining {
		timeout = etcdJoinTimeout
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		select {
		case <-e.Server.StoppingNotify():
			e.Close()
			return nil, "", removedWhileStarting(name, cfg)
		default:
		}
		e.Close()
		return nil, "", fmt.Errorf("etcd in %s failed: %w", dir, err)
	case <-e.Server.StopNotify():
		e.Close()
		return nil, "", removedWhileStarting(name, cfg)
	case <-time.After(timeout):
		e.Close()
		if cfg.InitialCluster != name+"="+peerURL.String() {
			return nil, "", fmt.Errorf("etcd member %s was not ready after %s: it needs a majority of the members of --etcd-initial-cluster to answer on their peer URLs (are they started, reachable, and do they share the etcd CA of pki/etcd?); see %s", name, timeout, cfg.LogOutputs[0])
		}
		return nil, "", fmt.Errorf("etcd in %s was not ready after %s: is the disk full or very slow?", dir, timeout)
	case <-ctx.Done():
		e.Close()
		return nil, "", ctx.Err()
	}
	return e, clientURL.String(), nil
}

// etcdPortAttempts bounds how often startEtcd picks ports again when one
// was taken before etcd bound it.
const etcdPortAttempts = 3

// etcdConfig is the configuration of the embedded etcd named name, storing
// its data in dir and listening on clientURL and peerURL; configure, when
// set, changes it last.
func etcdConfig(name, dir string, clientURL, peerURL url.URL, configure func(*embed.Config) error) (*embed.Config, error) {
	cfg := embed.NewConfig()
	cfg.Name = name
	cfg.Dir = dir
	cfg.ListenClientUrls = []url.URL{clientURL}
	cfg.AdvertiseClientUrls = []url.URL{clientURL}
	cfg.ListenPeerUrls = []url.URL{peerURL}
	cfg.AdvertisePeerUrls = []url.URL{peerURL}
	cfg.InitialCluster = name + "=" + peerURL.String()
	// etcd logs to its own file: its shutdown chatter is not for operators.
	cfg.LogLevel = "warn"
	cfg.LogOutputs = []string{filepath.Join(filepath.Dir(dir), "etcd.log")}
	// The API server compacts every five minutes; this also bounds the
	// history when the hub runs against this etcd for a long time.
	cfg.AutoCompactionMode = "periodic"
	cfg.AutoCompactionRetention = "1h"
	cfg.QuotaBackendBytes = 8 << 30
	// Hide etcd's own metrics listener: the hub serves its own.
	cfg.ListenMetricsUrls = nil
	if configure != nil {
		if err := configure(cfg); err != nil {
			return nil, err
		}
	}
	return cfg, nil
}

// removedWhileStarting says why a member stopped on its own while starting:
// a member that its cluster removed hears so from its peers and stops
// (etcd.log: "the member has been permanently removed").
func removedWhileStarting(name string, cfg *embed.Config) error {
	return fmt.Errorf("etcd member %s stopped while starting; most likely it was removed from its cluster (flotilla-hub member remove): a removed member rejoins only with an empty data directory (keep a copy of pki/), after flotilla-hub member add on a running member; see %s", name, cfg.LogOutputs[0])
}

// freePort asks the kernel for a free TCP port on loopback (a variable, so
// that a test can hand out a port that is taken).
var freePort = func() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// checkEtcdData opens an existing etcd database read-only first: etcd
// panics on a corrupt one, where the operator deserves a sentence.
func checkEtcdData(dir string) error {
	path := filepath.Join(dir, "member", "snap", "db")
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		return fmt.Errorf("etcd data in %s is unreadable or corrupt (%v): restore the data directory from a backup, or start with an empty one", dir, err)
	}
	return db.Close()
}
