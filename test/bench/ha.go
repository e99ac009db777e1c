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
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
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
	api, err := framework.Start(ctx, framework.HubAPI)
	if err != nil {
		return err
	}
	defer api.Stop()
	spoke, err := framework.StartHubProcess(ctx, e.binDir, filepath.Join(e.workDir, "ha-spoke-"+strconv.Itoa(int(l.retry.Seconds()))), 2*time.Minute)
	if err != nil {
		return err
	}
	defer spoke.Stop(time.Minute)
	certDir, err := api.EnsureServingCert("webhook", []string{"localhost"}, []net.IP{net.ParseIP("127.0.0.1")})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(certDir, "ca.crt"), api.CAData, 0o600); err != nil {
		return err
	}
	port, err := framework.FreePort()
	if err != nil {
		return err
	}
	var replicas []*framework.Process
	defer func() {
		for _, r := range replicas {
			r.Stop(time.Minute)
		}
	}()
	for range 2 {
		p, err := framework.StartProcess(ctx, filepath.Join(e.binDir, "flotilla-hub"), append(l.args(), "--kubeconfig", api.AdminKubeconfig,
			"--webhook-cert-dir", certDir, "--webhook-port", strconv.Itoa(port), "--webhook-reuse-port",
			"--webhook-advertise-url", "https://127.0.0.1:"+strconv.Itoa(port), "--metrics-bind-address", "0", "--health-probe-bind-address", "0")...)
		if err != nil {
			return err
		}
		replicas = append(replicas, p)
		if err := p.WaitForOutput("Serving the ManifestWork admission webhook", time.Minute); err != nil {
			return err
		}
	}
	leader := func() *framework.Process {
		for _, r := range replicas {
			if !r.Exited() && strings.Contains(r.Output(), "flotilla-hub is ready") {
				return r
			}
		}
		return nil
	}
	if err := waitFor(ctx, 2*time.Minute, func() bool { return leader() != nil }); err != nil {
		return fmt.Errorf("no replica leads: %w", err)
	}

	const cluster = "bench-ha"
	join, err := initHubAt(ctx, api.AdminKubeconfig)
	if err != nil {
		return err
	}
	agentProc, err := joinAndAccept(ctx, e, spoke.Kubeconfig, api.AdminKubeconfig, join, cluster)
	if err != nil {
		return err
	}
	defer agentProc.Stop(time.Minute)

	c, err := benchHubClient(api.AdminKubeconfig)
	if err != nil {
		return err
	}
	w, err := c.Watch(ctx, &workv1.ManifestWorkList{}, client.InNamespace(cluster))
	if err != nil {
		return err
	}
	defer w.Stop()
	var mu sync.Mutex
	created, applied := map[string]time.Time{}, map[string]time.Time{}
	go func() {
		for ev := range w.ResultChan() {
			mw, ok := ev.Object.(*workv1.ManifestWork)
			if !ok || ev.Type == watch.Deleted || !meta.IsStatusConditionTrue(mw.Status.Conditions, workv1.WorkApplied) {
				continue
			}
			mu.Lock()
			if _, seen := applied[mw.Name]; !seen {
				applied[mw.Name] = time.Now()
			}
			mu.Unlock()
		}
	}()

	// Write a work every 50 ms from 2 s before the kill until 5 s after the
	// standby leads.
	old := leader()
	var (
		killed, firstWrite time.Time
		failures           int
		maxWrite           time.Duration
		taken              time.Duration
	)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	started := time.Now()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		if killed.IsZero() && time.Since(started) > 2*time.Second {
			killed = time.Now()
			old.Kill()
		}
		if !killed.IsZero() && taken == 0 {
			if l := leader(); l != nil {
				taken = time.Since(killed)
			}
		}
		if taken > 0 && time.Since(killed) > taken+5*time.Second {
			break
		}
		if !killed.IsZero() && time.Since(killed) > 5*time.Minute {
			return fmt.Errorf("no standby took over within 5 minutes")
		}
		mw := benchManifestWork(cluster, fmt.Sprintf("ha-%05d", i))
		at := time.Now()
		err := c.Create(ctx, mw)
		took := time.Since(at)
		if err != nil {
			failures++
			continue
		}
		mu.Lock()
		created[mw.Name] = at
		mu.Unlock()
		if !killed.IsZero() {
			maxWrite = max(maxWrite, took)
			if firstWrite.IsZero() {
				firstWrite = time.Now()
			}
		}
	}
	// Every work written during the failover must be Applied.
	var during []time.Duration
	err = waitFor(ctx, 2*time.Minute, func() bool {
		mu.Lock()
		defer mu.Unlock()
		during = during[:0]
		for name, at := range created {
			if at.Before(killed) {
				continue
			}
			done, ok := applied[name]
			if !ok {
				return false
			}
			during = append(during, done.Sub(at))
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("works written during the failover were not all Applied: %w", err)
	}
	slices.Sort(during)
	row(l.name+": kill → controllers running again", seconds(taken), "")
	row(l.name+": kill → next successful ManifestWork write", millis(firstWrite.Sub(killed)), "")
	row(l.name+": slowest ManifestWork create during failover", millis(maxWrite), "")
	row(l.name+": failed ManifestWork writes during failover", strconv.Itoa(failures), "0")
	row(fmt.Sprintf("%s: create → Applied p99 during failover (%d works)", l.name, len(during)), millis(during[len(during)*99/100]), "")
	return nil
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
	defer func() { hubProc.Stop(time.Minute) }()
	cfg, err := clientcmd.BuildConfigFromFlags("", hubProc.Kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 500, 1000
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
	if firstErr != nil {
		return firstErr
	}
	archive := filepath.Join(e.workDir, "ha-hub.tar.gz")
	started := time.Now()
	if out, err := exec.CommandContext(ctx, filepath.Join(e.binDir, "flotilla-hub"), "snapshot", "save", archive, "--data-dir", dir).CombinedOutput(); err != nil {
		return fmt.Errorf("snapshot save: %w: %s", err, out)
	}
	saved := time.Since(started)
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
	started = time.Now()
	if out, err := exec.CommandContext(ctx, filepath.Join(e.binDir, "flotilla-hub"), "snapshot", "restore", archive, "--data-dir", restored).CombinedOutput(); err != nil {
		return fmt.Errorf("snapshot restore: %w: %s", err, out)
	}
	restoreTook := time.Since(started)
	started = time.Now()
	hubProc, err = framework.StartHubProcessOnPort(ctx, e.binDir, restored, port, 5*time.Minute)
	if err != nil {
		return err
	}
	ready := time.Since(started)
	clusters := &clusterv1.ManagedClusterList{}
	c, err = client.New(cfg, client.Options{Scheme: hub.Scheme()})
	if err != nil {
		return err
	}
	if err := c.List(ctx, clusters); err != nil {
		return err
	}
	if len(clusters.Items) != n {
		return fmt.Errorf("the restored hub holds %d clusters, not %d", len(clusters.Items), n)
	}
	row(fmt.Sprintf("snapshot save, online (%d clusters, etcd db %s)", n, mib(db.Size())), seconds(saved), "")
	row(fmt.Sprintf("snapshot archive size (%d clusters)", n), fmt.Sprintf("%.2f MiB", float64(info.Size())/(1<<20)), "")
	row(fmt.Sprintf("snapshot restore into a new data dir (%d clusters)", n), seconds(restoreTook), "")
	row(fmt.Sprintf("restored hub: start → ready (%d clusters)", n), seconds(ready), "")
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
