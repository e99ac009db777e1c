package framework

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// coreDNSBuild is the one build of stock CoreDNS per test process.
var coreDNSBuild struct {
	once sync.Once
	bin  string
	err  error
}

// coreDNSBuildLock serializes the builds of CoreDNS of the processes of one
// test run (ginkgo runs several). It is not /tmp/flotilla-heavy.lock: a run
// started under `flock /tmp/flotilla-heavy.lock make test-integration`
// holds that one already, and taking it again from inside would wait for
// ever. `make test-integration` builds CoreDNS (make coredns) before the
// suite starts, so that here the build finds everything compiled.
const coreDNSBuildLock = "/tmp/flotilla-coredns-build.lock"

// BuildCoreDNS builds stock CoreDNS from its own Go module (hack/coredns)
// into the repository's bin/ directory, once per test process, and returns
// the binary's path. Processes of one run build one after the other; a
// build with nothing changed takes seconds.
func BuildCoreDNS() (string, error) {
	coreDNSBuild.once.Do(func() {
		coreDNSBuild.bin, coreDNSBuild.err = buildCoreDNS()
	})
	return coreDNSBuild.bin, coreDNSBuild.err
}

func buildCoreDNS() (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	lock, err := os.OpenFile(coreDNSBuildLock, os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return "", fmt.Errorf("open the CoreDNS build lock %s: %w", coreDNSBuildLock, err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("lock %s: %w", coreDNSBuildLock, err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	bin := filepath.Join(root, "bin")
	cmd := exec.Command("go", "build", "-o", bin+string(filepath.Separator), ".", "./cmd/dnsq")
	cmd.Dir = filepath.Join(root, "hack", "coredns")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build CoreDNS in %s (as make coredns does): %w\n%s", cmd.Dir, err, out)
	}
	return filepath.Join(bin, "coredns"), nil
}

// repoRoot is the directory above the working directory that holds
// hack/coredns/go.mod.
func repoRoot() (string, error) {
	dir, err := filepath.Abs(".")
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "hack", "coredns", "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no hack/coredns/go.mod in any directory above the working directory: run the tests inside the repository")
		}
		dir = parent
	}
}

// CoreDNS is stock CoreDNS running as a process on 127.0.0.1, answering
// cluster.local and clusterset.local from one cluster's API server with
// its kubernetes plugin, as a cluster's own CoreDNS does with
// `multicluster clusterset.local` on.
type CoreDNS struct {
	// Addr is the address it serves DNS on, UDP and TCP: 127.0.0.1:<port>.
	Addr string
	// Corefile is the configuration it runs with.
	Corefile string
	proc     *Process
	dir      string
}

// CoreDNSCorefile is the server block the tests run CoreDNS with: the
// stanza docs/services.md tells a cluster's admin to use, on addr, reading
// the cluster through kubeconfig.
func CoreDNSCorefile(addr, kubeconfig string) string {
	host, port, _ := net.SplitHostPort(addr)
	return fmt.Sprintf(`.:%s {
    bind %s
    errors
    kubernetes cluster.local clusterset.local in-addr.arpa ip6.arpa {
        kubeconfig %s
        pods insecure
        multicluster clusterset.local
        fallthrough in-addr.arpa ip6.arpa
        ttl 5
    }
}
`, port, host, kubeconfig)
}

// StartCoreDNS builds CoreDNS (BuildCoreDNS) and starts it on a free port of
// 127.0.0.1 against the cluster that kubeconfig reaches. It returns once
// CoreDNS serves; Stop ends it. A port another process takes between
// choosing and binding it is given up for another, a few times.
func StartCoreDNS(ctx context.Context, kubeconfig string) (*CoreDNS, error) {
	bin, err := BuildCoreDNS()
	if err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		c, err := startCoreDNS(ctx, bin, kubeconfig)
		if err == nil {
			return c, nil
		}
		if attempt == 3 || !strings.Contains(err.Error(), "address already in use") {
			return nil, err
		}
	}
}

func startCoreDNS(ctx context.Context, bin, kubeconfig string) (*CoreDNS, error) {
	port, err := freeDNSPort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "flotilla-coredns-")
	if err != nil {
		return nil, err
	}
	c := &CoreDNS{Addr: net.JoinHostPort("127.0.0.1", fmt.Sprint(port)), dir: dir}
	c.Corefile = CoreDNSCorefile(c.Addr, kubeconfig)
	conf := filepath.Join(dir, "Corefile")
	if err := os.WriteFile(conf, []byte(c.Corefile), 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	c.proc, err = StartProcess(ctx, bin, "-conf", conf)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// CoreDNS prints its version once its servers listen (and the
	// kubernetes plugin waits up to 5 s for its first sync before that).
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(c.proc.Output(), "CoreDNS-") {
		if c.proc.Exited() || time.Now().After(deadline) {
			c.Stop()
			return nil, fmt.Errorf("CoreDNS on %s did not start: %s", c.Addr, c.proc.Tail(20))
		}
		time.Sleep(50 * time.Millisecond)
	}
	return c, nil
}

// freeDNSPort finds a port of 127.0.0.1 free for both UDP and TCP, by
// binding and releasing it.
func freeDNSPort() (int, error) {
	for range 20 {
		u, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := u.LocalAddr().(*net.UDPAddr).Port
		t, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", fmt.Sprint(port)))
		u.Close()
		if err != nil {
			continue
		}
		t.Close()
		return port, nil
	}
	return 0, errors.New("no port of 127.0.0.1 free for both UDP and TCP after 20 tries")
}

// Output is what CoreDNS logged so far.
func (c *CoreDNS) Output() string { return c.proc.Output() }

// Stop ends CoreDNS and removes its configuration.
func (c *CoreDNS) Stop() {
	c.proc.Stop(5 * time.Second)
	os.RemoveAll(c.dir)
}
