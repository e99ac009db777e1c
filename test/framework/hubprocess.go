package framework

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// HubProcess is a flotilla-hub binary running as a separate process.
type HubProcess struct {
	*Process
	// DataDir is the hub's --data-dir.
	DataDir string
	// Port is the hub's --secure-port.
	Port int
	// Kubeconfig is the admin kubeconfig the hub wrote.
	Kubeconfig string
}

// readyLine is what flotilla-hub prints once it serves and its controllers run.
const readyLine = "flotilla-hub is ready at"

// StartHubProcess starts bin/flotilla-hub on dataDir and a free port, and
// waits until it says it is ready (or exits, or timeout passes).
func StartHubProcess(ctx context.Context, binDir, dataDir string, timeout time.Duration, extraArgs ...string) (*HubProcess, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	return StartHubProcessOnPort(ctx, binDir, dataDir, port, timeout, extraArgs...)
}

// StartHubProcessOnPort is StartHubProcess on a given --secure-port, as a
// restart that agents must find again needs.
func StartHubProcessOnPort(ctx context.Context, binDir, dataDir string, port int, timeout time.Duration, extraArgs ...string) (*HubProcess, error) {
	args := append([]string{
		"--data-dir", dataDir,
		"--secure-port", strconv.Itoa(port),
		"--metrics-bind-address", "0",
		"--health-probe-bind-address", "0",
	}, extraArgs...)
	p, err := StartProcess(ctx, filepath.Join(binDir, "flotilla-hub"), args...)
	if err != nil {
		return nil, err
	}
	h := &HubProcess{Process: p, DataDir: dataDir, Port: port, Kubeconfig: filepath.Join(dataDir, "admin.kubeconfig")}
	if err := p.WaitForOutput(readyLine, timeout); err != nil {
		p.Stop(10 * time.Second)
		return nil, err
	}
	return h, nil
}

// WaitForOutput waits until the process has printed text, and fails early
// when the process exits first.
func (p *Process) WaitForOutput(text string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if strings.Contains(p.Output(), text) {
			return nil
		}
		if p.Exited() {
			return fmt.Errorf("process exited (code %d) before printing %q; last output:\n%s", p.cmd.ProcessState.ExitCode(), text, p.Tail(20))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no %q after %s; last output:\n%s", text, timeout, p.Tail(20))
		}
		<-tick.C
	}
}

// FreePort finds a free TCP port on loopback for a process to listen on
// later. It picks one below the kernel's range of ephemeral ports
// (net.ipv4.ip_local_port_range), which the kernel also gives to the
// outbound connections of every process here: a port from that range can
// be taken by a client's connection before the process binds it (a
// benchmark's hub members dial each other hundreds of times a second).
func FreePort() (int, error) {
	if low := ephemeralLow(); low > freePortFloor+1000 {
		for range 100 {
			port := freePortFloor + rand.IntN(low-freePortFloor)
			if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err == nil {
				l.Close()
				return port, nil
			}
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// freePortFloor is the lowest port FreePort picks: above the ports of
// common services.
const freePortFloor = 20000

// ephemeralLow is the first port of the kernel's ephemeral range, 0 if
// unknown.
func ephemeralLow() int {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(data))
	if len(fields) != 2 {
		return 0
	}
	low, err := strconv.Atoi(fields[0])
	if err != nil {
		return 0
	}
	return low
}
