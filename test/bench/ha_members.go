package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/flotilla-io/flotilla/test/framework"
)

// membersIdle is how long the idle CPU of the hubs is measured.
const membersIdle = 10 * time.Second

// benchMembers measures what a hub of three embedded etcd members costs
// against one process, all on this machine (127.0.0.1, each its own ports
// and data directory): start to serving, then idle CPU and RSS, summed
// over the processes, with nothing joined; then create → Applied through
// each with one agent joined, and the loss of the etcd leader while works
// are created.
func benchMembers(ctx context.Context, e *env) error {
	single, err := framework.StartHubProcess(ctx, e.binDir, filepath.Join(e.workDir, "single"), 2*time.Minute)
	if err != nil {
		return err
	}
	cpu, rss, err := idleCost(ctx, []*framework.Process{single.Process}, 5*time.Second, membersIdle)
	if err != nil {
		single.Stop(30 * time.Second)
		return err
	}
	row("one hub process: idle CPU ("+membersIdle.String()+")", fmt.Sprintf("%.1f %%", cpu), "report (of one core)")
	row("one hub process: RSS", mib(rss), "")
	err = benchSingleDelivery(ctx, e, single)
	single.Stop(30 * time.Second)
	if err != nil {
		return err
	}

	m, took, err := startMembers(ctx, e)
	// Killed, not stopped: the benchmark is done with them, and stopped
	// one after another the last, without etcd quorum, still takes about
	// 10 s to give up on its API server's writes and close etcd.
	defer func() {
		for _, p := range m.procs {
			p.Kill()
		}
	}()
	if err != nil {
		return err
	}
	row("3 members: first start → all three serving", seconds(took), "report")
	cpu, rss, err = idleCost(ctx, m.procs, 5*time.Second, membersIdle)
	if err != nil {
		return err
	}
	row("3 members: idle CPU, sum ("+membersIdle.String()+")", fmt.Sprintf("%.1f %%", cpu), "report (of one core)")
	row("3 members: RSS, sum", mib(rss), "")
	return benchMemberFailover(ctx, e, m)
}

// memberShortLease is the shortest lease flotilla-hub lets members of an
// etcd cluster run with: its renew deadline outlasts an etcd election.
var memberShortLease = haLease{"short member lease (15 s / 10 s / 2 s)", 15 * time.Second, 10 * time.Second, 2 * time.Second, false}

// membersLease is the hub controllers' leader lease the members run
// with: the default only with -ha-default-lease, as the members' failover
// then waits it out (about a minute).
func membersLease() haLease {
	if *benchHADefaultLease {
		return haLeases[0]
	}
	return memberShortLease
}

// members are three running flotilla-hub members.
type members struct {
	procs []*framework.Process
	dirs  []string
	// ports are the members' API server ports on 127.0.0.1.
	ports []int
}

// startMembers starts three flotilla-hub members on 127.0.0.1, the second
// and third from a copy of the first's CA and keys, and waits until each
// serves (the leader says it is ready, the others that they stand by).
func startMembers(ctx context.Context, e *env) (*members, time.Duration, error) {
	var entries []string
	peers, ports := make([]int, 3), make([]int, 3)
	for i := range 3 {
		var err error
		if peers[i], err = framework.FreePort(); err != nil {
			return &members{}, 0, err
		}
		if ports[i], err = framework.FreePort(); err != nil {
			return &members{}, 0, err
		}
		entries = append(entries, fmt.Sprintf("m%d=https://127.0.0.1:%d", i+1, peers[i]))
	}
	webhook, err := framework.FreePort()
	if err != nil {
		return &members{}, 0, err
	}
	m := &members{dirs: make([]string, 3), ports: ports}
	dirs := m.dirs
	started := time.Now()
	for i := range 3 {
		dirs[i] = filepath.Join(e.workDir, fmt.Sprintf("m%d", i+1))
		if i > 0 {
			if err := copyPKI(dirs[0], dirs[i]); err != nil {
				return m, 0, err
			}
		}
		p, err := framework.StartProcess(ctx, filepath.Join(e.binDir, "flotilla-hub"), append(membersLease().args(),
			"--data-dir", dirs[i], "--secure-port", strconv.Itoa(ports[i]),
			"--metrics-bind-address", "0", "--health-probe-bind-address", "0",
			// One machine: the three share the webhook's address.
			"--webhook-port", strconv.Itoa(webhook), "--webhook-reuse-port",
			"--etcd-name", fmt.Sprintf("m%d", i+1), "--etcd-peer-url", fmt.Sprintf("https://127.0.0.1:%d", peers[i]),
			"--etcd-listen-peer-url", fmt.Sprintf("https://127.0.0.1:%d", peers[i]),
			"--etcd-initial-cluster", strings.Join(entries, ","))...)
		if err != nil {
			return m, 0, err
		}
		m.procs = append(m.procs, p)
		if i == 0 {
			// The first member makes the PKI before it waits for the others.
			if err := waitFor(ctx, time.Minute, func() bool {
				_, err := os.Stat(filepath.Join(dirs[0], "pki", "etcd", "ca.crt"))
				return err == nil
			}); err != nil {
				return m, 0, fmt.Errorf("the first member made no PKI: %w\n%s", err, p.Tail(20))
			}
		}
	}
	for _, p := range m.procs {
		if err := waitFor(ctx, 3*time.Minute, func() bool {
			out := p.Output()
			return p.Exited() || strings.Contains(out, "flotilla-hub is ready at") || strings.Contains(out, "Another hub process leads; standing by")
		}); err != nil || p.Exited() {
			return m, 0, fmt.Errorf("a member does not serve (exited: %t): %v\n%s", p.Exited(), err, p.Tail(20))
		}
	}
	return m, time.Since(started), nil
}

// copyPKI copies the CA and keys that every member shares from one data
// directory to another, as docs/ha.md says to.
func copyPKI(from, to string) error {
	for _, f := range []string{"ca.crt", "ca.key", "sa.key", "sa.pub", "etcd/ca.crt", "etcd/ca.key"} {
		data, err := os.ReadFile(filepath.Join(from, "pki", f))
		if err != nil {
			return err
		}
		dst := filepath.Join(to, "pki", f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// idleCost is the CPU (percent of one core) and RSS of procs summed, after
// settle for the start-up work to settle, over d.
func idleCost(ctx context.Context, procs []*framework.Process, settle, d time.Duration) (float64, int64, error) {
	if err := pause(ctx, settle); err != nil {
		return 0, 0, err
	}
	var before, after time.Duration
	for _, p := range procs {
		t, err := cpuTime(p.Pid())
		if err != nil {
			return 0, 0, err
		}
		before += t
	}
	started := time.Now()
	if err := pause(ctx, d); err != nil {
		return 0, 0, err
	}
	var rss int64
	for _, p := range procs {
		t, err := cpuTime(p.Pid())
		if err != nil {
			return 0, 0, err
		}
		after += t
		r, err := p.RSS()
		if err != nil {
			return 0, 0, err
		}
		rss += r
	}
	return 100 * (after - before).Seconds() / time.Since(started).Seconds(), rss, nil
}
