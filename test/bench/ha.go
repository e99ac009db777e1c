package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/hub"
	"github.com/flotilla-io/flotilla/test/framework"
)

var (
	benchHAClusters     = flag.Int("ha-clusters", 500, "ha: clusters (ManagedCluster, namespace and one ManifestWork each) in the hub that is snapshotted")
	benchHADefaultLease = flag.Bool("ha-default-lease", false, "ha: also time the failover with the default leader lease (60 s / 45 s / 10 s), which waits out the lease: about a minute more")
)

// haLease is one timing of the replicas' election.
type haLease struct {
	name                   string
	duration, renew, retry time.Duration
	// long runs wait out the lease, and run only with -ha-default-lease.
	long bool
}

var haLeases = []haLease{
	{"default lease (60 s / 45 s / 10 s)", hub.DefaultLease.Duration, hub.DefaultLease.RenewDeadline, hub.DefaultLease.RetryPeriod, true},
	{"short lease (6 s / 4 s / 1 s)", 6 * time.Second, 4 * time.Second, time.Second, false},
}

// args are the flotilla-hub flags of the lease.
func (l haLease) args() []string {
	return []string{"--leader-elect-lease-duration", l.duration.String(), "--leader-elect-renew-deadline", l.renew.String(), "--leader-elect-retry-period", l.retry.String()}
}

// benchHA measures hub availability: controller failover between replicas
// run with --kubeconfig (kill → controllers running again, kill → next
// ManifestWork write, create → Applied during the failover), and backup
// and restore of an embedded hub holding a fleet.
func benchHA(ctx context.Context, e *env) error {
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	for _, l := range haLeases {
		if l.long && !*benchHADefaultLease {
			fmt.Printf("  (the failover with the %s runs with -ha-default-lease)\n", l.name)
			continue
		}
		if err := benchFailover(ctx, e, l); err != nil {
			return err
		}
	}
	return benchSnapshot(ctx, e)
}

// benchFailover runs two replicas against an API server with one cluster
// joined, writes a ManifestWork every 50 ms, and SIGKILLs the leader.
func benchFailover(ctx context.Context, e *env, l haLease) error {
	var cl cleanups
	defer cl.run()
	api, err := framework.Start(ctx, framework.HubAPI)
	if err != nil {
		return err
	}
	cl.add(api.Stop)
	spoke, err := framework.StartHubProcess(ctx, e.binDir, filepath.Join(e.workDir, "ha-spoke-"+strconv.Itoa(int(l.retry.Seconds()))), 2*time.Minute)
	if err != nil {
		return err
	}
	cl.add(func() { spoke.Stop(time.Minute) })
	replicas, err := startReplicas(ctx, e, api, l, &cl)
	if err != nil {
		return err
	}
	if err := waitFor(ctx, 2*time.Minute, func() bool { return leader(replicas) != nil }); err != nil {
		return fmt.Errorf("no replica leads: %w", err)
	}
	c, applied, err := joinFailoverCluster(ctx, e, api.AdminKubeconfig, spoke.Kubeconfig, &cl)
	if err != nil {
		return err
	}
	fw, err := writeThroughFailover(ctx, c, replicas)
	if err != nil {
		return err
	}
	// Every work written during the failover must be Applied.
	during, _, err := applied.wait(ctx, fw.during, 2*time.Minute)
	if err != nil {
		return fmt.Errorf("works written during the failover were not all Applied: %w", err)
	}
	fw.print(l, during)
	return nil
}

// haCluster is the cluster joined to the replicas.
const haCluster = "bench-ha"

// startReplicas starts two flotilla-hub replicas against api, sharing the
// webhook's address, each once it serves the webhook.
func startReplicas(ctx context.Context, e *env, api *framework.ControlPlane, l haLease, cl *cleanups) ([]*framework.Process, error) {
	certDir, err := api.EnsureServingCert("webhook", []string{"localhost"}, []net.IP{net.ParseIP("127.0.0.1")})
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(certDir, "ca.crt"), api.CAData, 0o600); err != nil {
		return nil, err
	}
	port, err := framework.FreePort()
	if err != nil {
		return nil, err
	}
	var replicas []*framework.Process
	cl.add(func() {
		for _, r := range replicas {
			r.Stop(time.Minute)
		}
	})
	for range 2 {
		p, err := framework.StartProcess(ctx, filepath.Join(e.binDir, "flotilla-hub"), append(l.args(), "--kubeconfig", api.AdminKubeconfig,
			"--webhook-cert-dir", certDir, "--webhook-port", strconv.Itoa(port), "--webhook-reuse-port",
			"--webhook-advertise-url", "https://127.0.0.1:"+strconv.Itoa(port), "--metrics-bind-address", "0", "--health-probe-bind-address", "0")...)
		if err != nil {
			return nil, err
		}
		replicas = append(replicas, p)
		if err := p.WaitForOutput("Serving the ManifestWork admission webhook", time.Minute); err != nil {
			return nil, err
		}
	}
	return replicas, nil
}

// leader is the replica that runs the controllers, or nil.
func leader(replicas []*framework.Process) *framework.Process {
	for _, r := range replicas {
		if !r.Exited() && strings.Contains(r.Output(), "flotilla-hub is ready") {
			return r
		}
	}
	return nil
}

// joinFailoverCluster joins haCluster from the spoke to the hub whose
// admin kubeconfig is given and watches its works become Applied.
func joinFailoverCluster(ctx context.Context, e *env, adminKubeconfig, spokeKubeconfig string, cl *cleanups) (client.WithWatch, *appliedWatch, error) {
	join, err := initHubAt(ctx, adminKubeconfig)
	if err != nil {
		return nil, nil, err
	}
	agentProc, err := joinAndAccept(ctx, e, spokeKubeconfig, adminKubeconfig, join, haCluster)
	if err != nil {
		return nil, nil, err
	}
	cl.add(func() { agentProc.Stop(time.Minute) })
	c, err := benchHubClient(adminKubeconfig)
	if err != nil {
		return nil, nil, err
	}
	w, err := watchApplied(ctx, c, haCluster)
	if err != nil {
		return nil, nil, err
	}
	cl.add(w.stop)
	return c, w, nil
}

// failoverWrites is what the writes during a failover saw.
type failoverWrites struct {
	killed, firstWrite time.Time
	// taken is from the kill until the standby runs the controllers.
	taken, maxWrite time.Duration
	failures        int
	// during is when each work written after the kill was created.
	during map[string]time.Time
}

// writeThroughFailover writes a work every 50 ms from 2 s before it kills
// the leading replica until 5 s after the standby leads.
func writeThroughFailover(ctx context.Context, c client.Client, replicas []*framework.Process) (*failoverWrites, error) {
	old := leader(replicas)
	fw := &failoverWrites{during: map[string]time.Time{}}
	started := time.Now()
	err := everyTick(ctx, 50*time.Millisecond, func(i int) (bool, error) {
		if fw.killed.IsZero() && time.Since(started) > 2*time.Second {
			fw.killed = time.Now()
			old.Kill()
		}
		if !fw.killed.IsZero() && fw.taken == 0 && leader(replicas) != nil {
			fw.taken = time.Since(fw.killed)
		}
		if fw.taken > 0 && time.Since(fw.killed) > fw.taken+5*time.Second {
			return true, nil
		}
		if !fw.killed.IsZero() && time.Since(fw.killed) > 5*time.Minute {
			return false, fmt.Errorf("no standby took over within 5 minutes")
		}
		fw.write(ctx, c, benchManifestWork(haCluster, fmt.Sprintf("ha-%05d", i)))
		return false, nil
	})
	return fw, err
}

// write creates mw and counts it: its failure, or after the kill how
// long it took.
func (fw *failoverWrites) write(ctx context.Context, c client.Client, mw *workv1.ManifestWork) {
	at := time.Now()
	err := c.Create(ctx, mw)
	took := time.Since(at)
	if err != nil {
		fw.failures++
		return
	}
	if !fw.killed.IsZero() {
		fw.during[mw.Name] = at
		fw.maxWrite = max(fw.maxWrite, took)
		if fw.firstWrite.IsZero() {
			fw.firstWrite = time.Now()
		}
	}
}

// print prints the failover's rows; during are the create → Applied
// times of the works written after the kill, sorted.
func (fw *failoverWrites) print(l haLease, during []time.Duration) {
	_, p99 := percentiles(during)
	row(l.name+": kill → controllers running again", seconds(fw.taken), "")
	row(l.name+": kill → next successful ManifestWork write", millis(fw.firstWrite.Sub(fw.killed)), "")
	row(l.name+": slowest ManifestWork create during failover", millis(fw.maxWrite), "")
	row(l.name+": failed ManifestWork writes during failover", strconv.Itoa(fw.failures), "0")
	row(fmt.Sprintf("%s: create → Applied p99 during failover (%d works)", l.name, len(during)), millis(p99), "")
}

// benchSnapshot fills an embedded hub with a fleet's objects, then times an
// online snapshot, a restore into a new data directory, and the restored
// hub's start.
func benchSnapshot(ctx context.Context, e *env) error {
	n := *benchHAClusters
	dir := filepath.Join(e.workDir, "ha-hub")
	hubProc, err := framework.StartHubProcess(ctx, e.binDir, dir, 2*time.Minute)
	if err != nil {
		return err
	}
	// The hub running now: the first, then the restored one.
	defer func() {
		if hubProc != nil {
			hubProc.Stop(time.Minute)
		}
	}()
	cfg, err := clientcmd.BuildConfigFromFlags("", hubProc.Kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 500, 1000
	if err := fillHub(ctx, cfg, n); err != nil {
		return err
	}
	archive := filepath.Join(e.workDir, "ha-hub.tar.gz")
	saved, err := snapshot(ctx, e, "save", archive, dir)
	if err != nil {
		return err
	}
	info, err := os.Stat(archive)
	if err != nil {
		return err
	}
	db, err := os.Stat(filepath.Join(dir, "etcd", "member", "snap", "db"))
	if err != nil {
		return err
	}
	port := hubProc.Port
	hubProc.Kill()
	restored := filepath.Join(e.workDir, "ha-hub-restored")
	restoreTook, err := snapshot(ctx, e, "restore", archive, restored)
	if err != nil {
		return err
	}
	started := time.Now()
	hubProc, err = framework.StartHubProcessOnPort(ctx, e.binDir, restored, port, 5*time.Minute)
	if err != nil {
		return err
	}
	ready := time.Since(started)
	if err := checkClusters(ctx, cfg, n); err != nil {
		return err
	}
	row(fmt.Sprintf("snapshot save, online (%d clusters, etcd db %s)", n, mib(db.Size())), seconds(saved), "")
	row(fmt.Sprintf("snapshot archive size (%d clusters)", n), fmt.Sprintf("%.2f MiB", float64(info.Size())/(1<<20)), "")
	row(fmt.Sprintf("snapshot restore into a new data dir (%d clusters)", n), seconds(restoreTook), "")
	row(fmt.Sprintf("restored hub: start → ready (%d clusters)", n), seconds(ready), "")
	return nil
}

// fillHub creates n clusters in the hub of cfg, each a ManagedCluster, its
// namespace and one ManifestWork, 16 at a time.
func fillHub(ctx context.Context, cfg *rest.Config, n int) error {
	c, err := client.New(cfg, client.Options{Scheme: hub.Scheme()})
	if err != nil {
		return err
	}
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	var firstErr error
	var errMu sync.Mutex
	for i := range n {
		name := fmt.Sprintf("ha-cluster-%04d", i)
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			for _, obj := range []client.Object{
				&clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}},
				&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}},
				benchManifestWork(name, "app"),
			} {
				if err := c.Create(ctx, obj); err != nil {
					errMu.Lock()
					firstErr = cmpErr(firstErr, err)
					errMu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return firstErr
}

// snapshot runs `flotilla-hub snapshot verb archive --data-dir dataDir`
// and says how long it took.
func snapshot(ctx context.Context, e *env, verb, archive, dataDir string) (time.Duration, error) {
	started := time.Now()
	if out, err := exec.CommandContext(ctx, filepath.Join(e.binDir, "flotilla-hub"), "snapshot", verb, archive, "--data-dir", dataDir).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("snapshot %s: %w: %s", verb, err, out)
	}
	return time.Since(started), nil
}

// checkClusters checks that the hub of cfg holds n ManagedClusters.
func checkClusters(ctx context.Context, cfg *rest.Config, n int) error {
	c, err := client.New(cfg, client.Options{Scheme: hub.Scheme()})
	if err != nil {
		return err
	}
	clusters := &clusterv1.ManagedClusterList{}
	if err := c.List(ctx, clusters); err != nil {
		return err
	}
	if len(clusters.Items) != n {
		return fmt.Errorf("the restored hub holds %d clusters, not %d", len(clusters.Items), n)
	}
	return nil
}

// initHubAt runs `flotilla init` against a hub's admin kubeconfig.
func initHubAt(ctx context.Context, kubeconfig string) (joinInfo, error) {
	return initHub(ctx, &framework.HubProcess{Kubeconfig: kubeconfig})
}

// waitFor polls cond every 50 ms until it holds or timeout passes.
func waitFor(ctx context.Context, timeout time.Duration, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %s", timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// cmpErr keeps the first error.
func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}
