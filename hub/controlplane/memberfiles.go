package controlplane

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// sharedPKIFiles are the files under pki/ that every member of a hub of
// several etcd members holds the same copy of: the hub CA, the
// service-account keys and the etcd peer CA. Every other file under pki/
// (serving, client, peer and webhook certificates) a member makes itself,
// for its own names, at start.
var sharedPKIFiles = []string{caCertFile, caKeyFile, saKeyFile, saPubFile, filepath.Join(etcdPKIDir, etcdCACertFile), filepath.Join(etcdPKIDir, etcdCAKeyFile)}

// SharedPKIFiles returns the paths, relative to a data directory's pki/,
// that every member of a hub shares (copies of one member's); the rest of
// pki/ each member makes for itself.
func SharedPKIFiles() []string {
	out := make([]string, len(sharedPKIFiles))
	for i, f := range sharedPKIFiles {
		out[i] = filepath.ToSlash(f)
	}
	return out
}

// EtcdCAFiles returns the etcd peer CA's certificate and key, relative to
// a data directory's pki/.
func EtcdCAFiles() (cert, key string) {
	return filepath.ToSlash(filepath.Join(etcdPKIDir, etcdCACertFile)), filepath.ToSlash(filepath.Join(etcdPKIDir, etcdCAKeyFile))
}

// CreateEtcdCA writes a new etcd peer CA under pkiDir, as the first member
// of a hub would make at its first start. It refuses to replace one.
func CreateEtcdCA(pkiDir string) error {
	dir := filepath.Join(pkiDir, etcdPKIDir)
	if _, err := os.Stat(filepath.Join(dir, etcdCACertFile)); err == nil {
		return fmt.Errorf("%s already holds an etcd CA", dir)
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cannot create %s: %w", dir, err)
	}
	return createCA(dir, etcdCACertFile, etcdCAKeyFile, "flotilla-etcd-ca")
}

// Validate says what is wrong with m, in the terms of flotilla-hub's
// flags, as the hub checks it at start; it fills in the defaults.
func (m *EtcdMember) Validate() error { return m.validate() }

// First is the member named first in InitialCluster: the one that makes
// the PKI on a first start.
func (m *EtcdMember) First() string { return m.first() }
