package controlplane

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestStartRejectsBadInput(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := busy.Addr().(*net.TCPAddr).Port

	cases := []struct {
		name string
		opts Options
		want string
	}{
		{"data dir under a file", Options{DataDir: filepath.Join(file, "hub")}, "cannot create data directory"},
		{"no data dir", Options{}, "data directory is required"},
		{"bad bind address", Options{DataDir: t.TempDir(), BindAddress: "localhost"}, "--bind-address"},
		{"unspecified advertise address", Options{DataDir: t.TempDir(), AdvertiseAddress: "0.0.0.0"}, "--advertise-address"},
		{"bad serving SAN", Options{DataDir: t.TempDir(), ServingSANs: []string{"hub_1"}}, "--tls-san"},
		{"port out of range", Options{DataDir: t.TempDir(), SecurePort: 70000}, "--secure-port"},
		{"port in use", Options{DataDir: t.TempDir(), SecurePort: busyPort}, "choose another --secure-port"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Start(context.Background(), tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Start: got error %v, want one containing %q", err, tc.want)
			}
			if tc.opts.DataDir != "" {
				if _, err := os.Stat(filepath.Join(tc.opts.DataDir, "pki")); err == nil {
					t.Errorf("a failed start left %s/pki behind", tc.opts.DataDir)
				}
			}
		})
	}
}

func TestDataDirLockIsExclusive(t *testing.T) {
	dir := t.TempDir()
	first, err := lockDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lockDataDir(dir); err == nil || !strings.Contains(err.Error(), "in use by another hub") {
		t.Fatalf("second lock: got %v, want an in-use error", err)
	}
	first.Close()
	second, err := lockDataDir(dir)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	second.Close()
}

func TestInterruptedFirstStartLeavesNoPartialCA(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pki")
	failPKIStep = func(string) error { return errors.New("interrupted") }
	defer func() { failPKIStep = func(string) error { return nil } }()

	if _, err := ensurePKI(dir, servingHosts(), nil); err == nil {
		t.Fatal("ensurePKI succeeded despite the interruption")
	}
	entries, err := os.ReadDir(filepath.Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Fatalf("interrupted creation left %v behind", entries)
	}
}

func TestPKIIsCreatedOnceAndReused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pki")
	ips := []net.IP{net.ParseIP("127.0.0.1")}
	first, err := ensurePKI(dir, servingHosts(), ips)
	if err != nil {
		t.Fatal(err)
	}
	second, err := ensurePKI(dir, servingHosts(), ips)
	if err != nil {
		t.Fatal(err)
	}
	if !first.caCert.Equal(second.caCert) {
		t.Fatal("the CA was recreated on the second start")
	}
	serving, err := os.ReadFile(filepath.Join(dir, servingCertFile))
	if err != nil {
		t.Fatal(err)
	}

	const by = "a new advertise address re-issues only the serving certificate"
	third, err := ensurePKI(dir, servingHosts(), append(ips, net.ParseIP("192.0.2.10")))
	if err != nil {
		t.Fatal(by, err)
	}
	if !first.caCert.Equal(third.caCert) {
		t.Fatal(by, ": the CA changed")
	}
	reissued, _ := os.ReadFile(filepath.Join(dir, servingCertFile))
	if string(reissued) == string(serving) {
		t.Fatal(by, ": the serving certificate was not re-issued")
	}
}

func TestServingSANsAddNamesAndAddresses(t *testing.T) {
	o := Options{BindAddress: "0.0.0.0", AdvertiseAddress: "192.0.2.10", ServingSANs: []string{"hub.example.com", "198.51.100.7", "*.hubs.example.com"}}
	hosts, ips := servingSANs(o)
	for _, h := range []string{"localhost", "kubernetes.default.svc", "hub.example.com", "*.hubs.example.com"} {
		if !slices.Contains(hosts, h) {
			t.Errorf("DNS names %v lack %s", hosts, h)
		}
	}
	for _, ip := range []string{"127.0.0.1", "192.0.2.10", "198.51.100.7"} {
		if !slices.ContainsFunc(ips, net.ParseIP(ip).Equal) {
			t.Errorf("IP addresses %v lack %s", ips, ip)
		}
	}
	if slices.Contains(hosts, "198.51.100.7") {
		t.Errorf("the IP address SAN went into the DNS names too: %v", hosts)
	}
}

func TestCorruptCAIsReported(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pki")
	if _, err := ensurePKI(dir, servingHosts(), nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, caCertFile), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ensurePKI(dir, servingHosts(), nil)
	if err == nil || !strings.Contains(err.Error(), "ca.crt is corrupt") || !strings.Contains(err.Error(), "empty data directory") {
		t.Fatalf("got %v, want a message naming ca.crt and the way out", err)
	}
}

func TestCorruptEtcdDataIsReported(t *testing.T) {
	dir := t.TempDir()
	snap := filepath.Join(dir, "member", "snap")
	if err := os.MkdirAll(snap, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(snap, "db"), []byte(strings.Repeat("not a bolt database ", 1000)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := startEtcd(context.Background(), "test", dir)
	if err == nil || !strings.Contains(err.Error(), "corrupt") || !strings.Contains(err.Error(), "backup") {
		t.Fatalf("got %v, want a message saying the data is corrupt and what to do", err)
	}
}

func TestEtcdPicksOtherPortsWhenOneIsTaken(t *testing.T) {
	// The first port handed out is held by another listener, as when an
	// outbound connection is given it between freePort and etcd's bind.
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	takenPort := taken.Addr().(*net.TCPAddr).Port
	pick, handed := freePort, 0
	freePort = func() (int, error) {
		if handed++; handed == 1 {
			return takenPort, nil
		}
		return pick()
	}
	defer func() { freePort = pick }()

	e, clientURL, err := startEtcd(context.Background(), "test", filepath.Join(t.TempDir(), "etcd"))
	if err != nil {
		t.Fatalf("etcd did not start on other ports: %v", err)
	}
	defer e.Close()
	if handed < 4 {
		t.Fatalf("freePort called %d times, want the two ports picked again after the taken one", handed)
	}
	if strings.Contains(clientURL, ":"+strconv.Itoa(takenPort)) {
		t.Fatalf("etcd's client URL %s is on the taken port", clientURL)
	}
}
