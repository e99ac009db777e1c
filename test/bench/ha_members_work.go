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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// timeDelivery creates membersWorks works through c, one every
// membersWorkEvery, named after prefix, and prints their create → Applied
// p50 and p99 through who.
func timeDelivery(ctx context.Context, c client.Client, a *appliedWatch, prefix, who string) error {
	created, err := createWorks(ctx, c, membersCluster, membersWorks, membersWorkEvery, func(i int) string { return fmt.Sprintf("%s-%03d", prefix, i) })
	if err != nil {
		return err
	}
	lat, err := a.latencies(ctx, created, 2*time.Minute)
	if err != nil {
		return err
	}
	what := fmt.Sprintf("(%d works, one per %s)", membersWorks, membersWorkEvery)
	p50, p99 := percentiles(lat)
	row(who+": create → Applied p50 "+what, millis(p50), "")
	row(who+": create → Applied p99 "+what, millis(p99), "")
	return nil
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
	return timeDelivery(ctx, c, w, "single", "one hub process")
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
	victim := m.controllersLeader()
	if victim < 0 {
		return fmt.Errorf("no member runs the hub controllers")
	}
	if err := makeEtcdLeader(ctx, m, victim); err != nil {
		return err
	}
	writer := (victim + 1) % 3
	kubeconfig := filepath.Join(m.dirs[writer], "admin.kubeconfig")
	a, err := joinAgent(ctx, e, kubeconfig, m.url(victim), m.addressesBut(victim))
	defer a.stop()
	if err != nil {
		return err
	}
	c, err := hubClient(kubeconfig, m.url(writer))
	if err != nil {
		return err
	}
	w, err := watchApplied(ctx, c, membersCluster)
	if err != nil {
		return err
	}
	defer w.stop()
	if err := timeDelivery(ctx, c, w, "members", "3 members"); err != nil {
		return err
	}

	kw := watchKill(ctx, m, victim, a.proc)
	defer kw.stop()
	writes, err := writeThroughKill(ctx, c, m, victim, kw)
	if err != nil {
		return err
	}
	lat, err := w.latencies(ctx, writes.during, 2*time.Minute)
	if err != nil {
		return fmt.Errorf("works written during the failover were not all Applied: %w\nagent output:\n%s", err, a.proc.Tail(20))
	}
	kw.stop()
	kw.mu.Lock()
	defer kw.mu.Unlock()
	fmt.Printf("  (killed m%d, the etcd leader and the hub controllers' leader, which the agent used; works written through m%d)\n", victim+1, writer+1)
	writes.print(kw, lat)
	return nil
}

// controllersLeader is the index of the member that runs the hub
// controllers (the last that says so), or -1.
func (m *members) controllersLeader() int {
	leader := -1
	for i, p := range m.procs {
		if strings.Contains(p.Output(), "flotilla-hub is ready at") {
			leader = i
		}
	}
	return leader
}

// url is the address of member i's API server.
func (m *members) url(i int) string { return "https://127.0.0.1:" + strconv.Itoa(m.ports[i]) }

// addressesBut are the host:port addresses of the members other than i.
func (m *members) addressesBut(i int) []string {
	var others []string
	for j := range m.procs {
		if j != i {
			others = append(others, "127.0.0.1:"+strconv.Itoa(m.ports[j]))
		}
	}
	return others
}

// killWatch watches, apart from the writes (which block during the etcd
// election), how long after the kill of the victim another member runs
// the hub controllers (taken) and the agent connected to another member
// (moved).
type killWatch struct {
	mu           sync.Mutex
	killed       time.Time
	taken, moved time.Duration
	stop         context.CancelFunc
}

func watchKill(ctx context.Context, m *members, victim int, agentProc *framework.Process) *killWatch {
	leads := func() bool {
		for i, p := range m.procs {
			if i != victim && strings.Contains(p.Output(), "flotilla-hub is ready at") {
				return true
			}
		}
		return false
	}
	watchCtx, stop := context.WithCancel(ctx)
	kw := &killWatch{stop: stop}
	go func() {
		for watchCtx.Err() == nil {
			kw.mu.Lock()
			if !kw.killed.IsZero() {
				if kw.taken == 0 && leads() {
					kw.taken = time.Since(kw.killed)
				}
				if kw.moved == 0 && strings.Contains(agentProc.Output(), "Connected to another address of the hub") {
					kw.moved = time.Since(kw.killed)
				}
			}
			kw.mu.Unlock()
			select {
			case <-watchCtx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return kw
}

// memberWrites is what the writes through a member saw after the kill.
type memberWrites struct {
	firstWrite       time.Time
	failures, writes int
	firstErr         error
	maxWrite         time.Duration
	// during is when each work written after the kill was created.
	during map[string]time.Time
}

// writeThroughKill creates a work every membersWorkEvery through c, kills
// the victim 2 s in, and goes on until 15 s after the kill, and 5 s after
// another member runs the hub controllers when the killed one ran them.
func writeThroughKill(ctx context.Context, c client.Client, m *members, victim int, kw *killWatch) (*memberWrites, error) {
	mw := &memberWrites{during: map[string]time.Time{}}
	started := time.Now()
	err := everyTick(ctx, membersWorkEvery, func(i int) (bool, error) {
		kw.mu.Lock()
		if kw.killed.IsZero() && time.Since(started) > 2*time.Second {
			kw.killed = time.Now()
			m.procs[victim].Kill()
		}
		killedAt, taken := kw.killed, kw.taken
		kw.mu.Unlock()
		if !killedAt.IsZero() {
			since := time.Since(killedAt)
			if since > 15*time.Second && taken > 0 && since > taken+5*time.Second {
				return true, nil
			}
			if since > 5*time.Minute {
				return false, fmt.Errorf("no member ran the hub controllers within 5 minutes of the kill")
			}
		}
		return false, mw.write(ctx, c, benchManifestWork(membersCluster, fmt.Sprintf("failover-%05d", i)), !killedAt.IsZero())
	})
	return mw, err
}

// write creates work; before the kill a failure ends the run, after it
// the write is counted.
func (mw *memberWrites) write(ctx context.Context, c client.Client, work *workv1.ManifestWork, afterKill bool) error {
	at := time.Now()
	err := c.Create(ctx, work)
	took := time.Since(at)
	if !afterKill {
		if err != nil {
			return fmt.Errorf("a write before the kill: %w", err)
		}
		return nil
	}
	mw.writes++
	mw.maxWrite = max(mw.maxWrite, took)
	if err != nil {
		mw.failures++
		mw.firstErr = cmpErr(mw.firstErr, err)
		return nil
	}
	mw.during[work.Name] = at
	if mw.firstWrite.IsZero() {
		mw.firstWrite = time.Now()
	}
	return nil
}

// print prints the failover's rows; lat are the create → Applied times of
// the works written after the kill, sorted.
func (mw *memberWrites) print(kw *killWatch, lat []time.Duration) {
	row("3 members, leader killed: kill → next successful ManifestWork write", millis(mw.firstWrite.Sub(kw.killed)), "")
	row("3 members, leader killed: slowest ManifestWork write attempt", millis(mw.maxWrite), "")
	row("3 members, leader killed: failed ManifestWork writes", fmt.Sprintf("%d of %d", mw.failures, mw.writes), "0")
	if mw.firstErr != nil {
		fmt.Printf("    first failure: %v\n", mw.firstErr)
	}
	_, p99 := percentiles(lat)
	row(fmt.Sprintf("3 members, leader killed: create → Applied p99 (%d works)", len(lat)), millis(p99), "")
	if kw.moved > 0 {
		row("3 members, leader killed: kill → agent on another member", seconds(kw.moved), "")
	} else {
		row("3 members, leader killed: kill → agent on another member", "not logged", "")
	}
	row("3 members, leader killed: kill → hub controllers running again, "+membersLease().name, seconds(kw.taken), "")
}
