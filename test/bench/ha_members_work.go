package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/agent"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/hub"
	"github.com/flotilla-io/flotilla/test/framework"
)

const (
	// membersWorks is how many works are timed from create to Applied
	// through each topology, one every membersWorkEvery.
	membersWorks     = 30
	membersWorkEvery = 100 * time.Millisecond
	membersCluster   = "bench-members"
)

// joinedAgent is a flotilla-agent process on a spoke control plane of its
// own, joined and accepted.
type joinedAgent struct {
	spoke *framework.ControlPlane
	proc  *framework.Process
}

func (a *joinedAgent) stop() {
	if a.proc != nil {
		a.proc.Stop(30 * time.Second)
	}
	if a.spoke != nil {
		a.spoke.Stop()
	}
}

// joinAgent runs `flotilla init` through adminKubeconfig, starts a spoke
// and a flotilla-agent for membersCluster bootstrapped against url (and
// hubServers, its further addresses), and accepts the cluster.
func joinAgent(ctx context.Context, e *env, adminKubeconfig, url string, hubServers []string) (*joinedAgent, error) {
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	a := &joinedAgent{}
	join, err := initHubAt(ctx, adminKubeconfig)
	if err != nil {
		return a, err
	}
	bootstrap := filepath.Join(e.workDir, fmt.Sprintf("bootstrap-%d.kubeconfig", time.Now().UnixNano()))
	if err := framework.WriteBootstrapKubeconfig(adminKubeconfig, url, join.Token, bootstrap); err != nil {
		return a, err
	}
	if a.spoke, err = framework.Start(ctx, framework.Spoke); err != nil {
		return a, err
	}
	if err := a.spoke.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: agent.DefaultNamespace}}); err != nil {
		return a, err
	}
	args := []string{"--kubeconfig", a.spoke.AdminKubeconfig, "--bootstrap-kubeconfig", bootstrap, "--cluster-name", membersCluster,
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0"}
	if len(hubServers) > 0 {
		args = append(args, "--hub-server", strings.Join(hubServers, ","))
	}
	if a.proc, err = framework.StartProcess(ctx, filepath.Join(e.binDir, "flotilla-agent"), args...); err != nil {
		return a, err
	}
	if _, err := flotilla(ctx, "accept", "--kubeconfig", adminKubeconfig, "--clusters", membersCluster, "--wait", "--timeout", "3m"); err != nil {
		return a, fmt.Errorf("%w\nagent output:\n%s", err, a.proc.Tail(20))
	}
	return a, nil
}

// appliedWatch records when each ManifestWork of a namespace is first seen
// Applied.
type appliedWatch struct {
	mu      sync.Mutex
	applied map[string]time.Time
	stop    func()
}

func watchApplied(ctx context.Context, c client.WithWatch, ns string) (*appliedWatch, error) {
	w, err := c.Watch(ctx, &workv1.ManifestWorkList{}, client.InNamespace(ns))
	if err != nil {
		return nil, err
	}
	a := &appliedWatch{applied: map[string]time.Time{}, stop: w.Stop}
	go func() {
		for ev := range w.ResultChan() {
			mw, ok := ev.Object.(*workv1.ManifestWork)
			if !ok || ev.Type == watch.Deleted || !meta.IsStatusConditionTrue(mw.Status.Conditions, workv1.WorkApplied) {
				continue
			}
			a.mu.Lock()
			if _, seen := a.applied[mw.Name]; !seen {
				a.applied[mw.Name] = time.Now()
			}
			a.mu.Unlock()
		}
	}()
	return a, nil
}

// latencies waits up to timeout until every work of created is Applied
// and returns the create → Applied times, sorted.
func (a *appliedWatch) latencies(ctx context.Context, created map[string]time.Time, timeout time.Duration) ([]time.Duration, error) {
	var out []time.Duration
	err := waitFor(ctx, timeout, func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		out = out[:0]
		for name, at := range created {
			done, ok := a.applied[name]
			if !ok {
				return false
			}
			out = append(out, done.Sub(at))
		}
		return true
	})
	if err != nil {
		a.mu.Lock()
		defer a.mu.Unlock()
		return nil, fmt.Errorf("%d of %d works Applied: %w", len(a.applied), len(created), err)
	}
	slices.Sort(out)
	return out, nil
}

// hubClient is a client of the hub whose admin kubeconfig is given,
// through the API server at url.
func hubClient(adminKubeconfig, url string) (client.WithWatch, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", adminKubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.Host = url
	cfg.QPS, cfg.Burst = 200, 400
	cfg.WarningHandler = rest.NoWarnings{}
	return client.NewWithWatch(cfg, client.Options{Scheme: hub.Scheme()})
}

// deliver creates membersWorks works, one every membersWorkEvery, and
// returns their create → Applied times, sorted.
func deliver(ctx context.Context, c client.Client, a *appliedWatch, prefix string) ([]time.Duration, error) {
	created := map[string]time.Time{}
	tick := time.NewTicker(membersWorkEvery)
	defer tick.Stop()
	for i := range membersWorks {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
		mw := benchManifestWork(membersCluster, fmt.Sprintf("%s-%03d", prefix, i))
		created[mw.Name] = time.Now()
		if err := c.Create(ctx, mw); err != nil {
			return nil, err
		}
	}
	return a.latencies(ctx, created, 2*time.Minute)
}

// benchSingleDelivery times create → Applied through one hub process.
func benchSingleDelivery(ctx context.Context, e *env, single *framework.HubProcess) error {
	url := "https://127.0.0.1:" + strconv.Itoa(single.Port)
	a, err := joinAgent(ctx, e, single.Kubeconfig, url, nil)
	defer a.stop()
	if err != nil {
		return err
	}
	c, err := hubClient(single.Kubeconfig, url)
	if err != nil {
		return err
	}
	w, err := watchApplied(ctx, c, membersCluster)
	if err != nil {
		return err
	}
	defer w.stop()
	lat, err := deliver(ctx, c, w, "single")
	if err != nil {
		return err
	}
	what := fmt.Sprintf("(%d works, one per %s)", membersWorks, membersWorkEvery)
	row("one hub process: create → Applied p50 "+what, millis(lat[len(lat)/2]), "")
	row("one hub process: create → Applied p99 "+what, millis(lat[len(lat)*99/100]), "")
	return nil
}

// etcdStatus is, for each member, its etcd member ID and the ID of the
// member its etcd follows as leader.
func etcdStatus(ctx context.Context, m *members) (urls []string, ids, leaders []uint64, err error) {
	for _, d := range m.dirs {
		u, err := os.ReadFile(filepath.Join(d, "etcd.url"))
		if err != nil {
			return nil, nil, nil, err
		}
		urls = append(urls, strings.TrimSpace(string(u)))
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: urls, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return nil, nil, nil, err
	}
	defer cli.Close()
	for i, u := range urls {
		st, err := cli.Status(ctx, u)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("etcd status of member %d: %w", i+1, err)
		}
		ids, leaders = append(ids, st.Header.MemberId), append(leaders, st.Leader)
	}
	return urls, ids, leaders, nil
}

// makeEtcdLeader moves the etcd leadership to member i, so that one
// member leads both etcd and the hub controllers: the worst one to lose.
func makeEtcdLeader(ctx context.Context, m *members, i int) error {
	urls, ids, leaders, err := etcdStatus(ctx, m)
	if err != nil {
		return err
	}
	if leaders[i] == ids[i] {
		return nil
	}
	from := slices.Index(ids, leaders[i])
	if from < 0 {
		return fmt.Errorf("member %d follows an etcd leader that is no member", i+1)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{urls[from]}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return err
	}
	defer cli.Close()
	if _, err := cli.MoveLeader(ctx, ids[i]); err != nil {
		return fmt.Errorf("move the etcd leadership to member %d: %w", i+1, err)
	}
	return waitFor(ctx, 30*time.Second, func() bool {
		_, ids, leaders, err := etcdStatus(ctx, m)
		return err == nil && leaders[i] == ids[i] && leaders[(i+1)%3] == ids[i] && leaders[(i+2)%3] == ids[i]
	})
}

// benchMemberFailover makes the member that runs the hub controllers the
// etcd leader too, joins one agent through its address (the others as
// --hub-server), times create → Applied through another member, then
// SIGKILLs the leading member while a work is created every 100 ms through
// that other member.
func benchMemberFailover(ctx context.Context, e *env, m *members) error {
	victim := -1
	for i, p := range m.procs {
		if strings.Contains(p.Output(), "flotilla-hub is ready at") {
			victim = i
		}
	}
	if victim < 0 {
		return fmt.Errorf("no member runs the hub controllers")
	}
	if err := makeEtcdLeader(ctx, m, victim); err != nil {
		return err
	}
	writer := (victim + 1) % 3
	url := func(i int) string { return "https://127.0.0.1:" + strconv.Itoa(m.ports[i]) }
	var others []string
	for i := range m.procs {
		if i != victim {
			others = append(others, "127.0.0.1:"+strconv.Itoa(m.ports[i]))
		}
	}
	kubeconfig := filepath.Join(m.dirs[writer], "admin.kubeconfig")
	a, err := joinAgent(ctx, e, kubeconfig, url(victim), others)
	defer a.stop()
	if err != nil {
		return err
	}
	c, err := hubClient(kubeconfig, url(writer))
	if err != nil {
		return err
	}
	w, err := watchApplied(ctx, c, membersCluster)
	if err != nil {
		return err
	}
	defer w.stop()
	lat, err := deliver(ctx, c, w, "members")
	if err != nil {
		return err
	}
	what := fmt.Sprintf("(%d works, one per %s)", membersWorks, membersWorkEvery)
	row("3 members: create → Applied p50 "+what, millis(lat[len(lat)/2]), "")
	row("3 members: create → Applied p99 "+what, millis(lat[len(lat)*99/100]), "")

	// A work every 100 ms through the writer, from 2 s before the kill
	// until 15 s after it, and 5 s after another member runs the hub
	// controllers when the killed one ran them.
	leads := func() bool {
		for i, p := range m.procs {
			if i != victim && strings.Contains(p.Output(), "flotilla-hub is ready at") {
				return true
			}
		}
		return false
	}
	// Watched apart from the writes, which block during the etcd election.
	var (
		watchMu      sync.Mutex
		killed       time.Time
		taken, moved time.Duration
	)
	watchCtx, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	go func() {
		for watchCtx.Err() == nil {
			watchMu.Lock()
			if !killed.IsZero() {
				if taken == 0 && leads() {
					taken = time.Since(killed)
				}
				if moved == 0 && strings.Contains(a.proc.Output(), "Connected to another address of the hub") {
					moved = time.Since(killed)
				}
			}
			watchMu.Unlock()
			select {
			case <-watchCtx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	var (
		firstWrite       time.Time
		failures, writes int
		firstErr         error
		maxWrite         time.Duration
	)
	during := map[string]time.Time{}
	tick := time.NewTicker(membersWorkEvery)
	defer tick.Stop()
	started := time.Now()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		watchMu.Lock()
		if killed.IsZero() && time.Since(started) > 2*time.Second {
			killed = time.Now()
			m.procs[victim].Kill()
		}
		killedAt, tk := killed, taken
		watchMu.Unlock()
		if !killedAt.IsZero() {
			since := time.Since(killedAt)
			if since > 15*time.Second && tk > 0 && since > tk+5*time.Second {
				break
			}
			if since > 5*time.Minute {
				return fmt.Errorf("no member ran the hub controllers within 5 minutes of the kill")
			}
		}
		mw := benchManifestWork(membersCluster, fmt.Sprintf("failover-%05d", i))
		at := time.Now()
		err := c.Create(ctx, mw)
		took := time.Since(at)
		if killedAt.IsZero() {
			if err != nil {
				return fmt.Errorf("a write before the kill: %w", err)
			}
			continue
		}
		writes++
		maxWrite = max(maxWrite, took)
		if err != nil {
			failures++
			firstErr = cmpErr(firstErr, err)
			continue
		}
		during[mw.Name] = at
		if firstWrite.IsZero() {
			firstWrite = time.Now()
		}
	}
	lat, err = w.latencies(ctx, during, 2*time.Minute)
	if err != nil {
		return fmt.Errorf("works written during the failover were not all Applied: %w\nagent output:\n%s", err, a.proc.Tail(20))
	}
	stopWatching()
	watchMu.Lock()
	defer watchMu.Unlock()
	fmt.Printf("  (killed m%d, the etcd leader and the hub controllers' leader, which the agent used; works written through m%d)\n", victim+1, writer+1)
	row("3 members, leader killed: kill → next successful ManifestWork write", millis(firstWrite.Sub(killed)), "")
	row("3 members, leader killed: slowest ManifestWork write attempt", millis(maxWrite), "")
	row("3 members, leader killed: failed ManifestWork writes", fmt.Sprintf("%d of %d", failures, writes), "0")
	if firstErr != nil {
		fmt.Printf("    first failure: %v\n", firstErr)
	}
	row(fmt.Sprintf("3 members, leader killed: create → Applied p99 (%d works)", len(lat)), millis(lat[len(lat)*99/100]), "")
	if moved > 0 {
		row("3 members, leader killed: kill → agent on another member", seconds(moved), "")
	} else {
		row("3 members, leader killed: kill → agent on another member", "not logged", "")
	}
	row("3 members, leader killed: kill → hub controllers running again, "+membersLease().name, seconds(taken), "")
	return nil
}
