package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/hub"
	"github.com/flotilla-io/flotilla/test/framework"
)

var (
	benchRestartOutage = flag.Duration("restart-outage", 10*time.Second, "restart: how long the hub stays down (SIGKILL, then the same port and data)")
	benchRestartWorks  = flag.Int("restart-works", 20, "restart: how many ManifestWorks are created once the hub is back")
)

// benchRestart kills the hub with SIGKILL while an agent holds a work,
// starts it again on the same port and data after the outage, and
// reports create → Applied for the first works created once it is back:
// how soon the agent's watches resume. The works are created one after
// another as fast as the hub takes them, right after the hub says it is
// ready.
func benchRestart(ctx context.Context, e *env) error {
	n, outage := *benchRestartWorks, *benchRestartOutage
	procs, err := startHubAndSpoke(ctx, e, "restart")
	if err != nil {
		return err
	}
	defer func() { procs.stop() }()
	const cluster = "bench-restart"
	agentProc, err := joinAndAccept(ctx, e, procs.spoke.Kubeconfig, procs.hub.Kubeconfig, procs.join, cluster)
	if err != nil {
		return err
	}
	defer agentProc.Stop(time.Minute)
	c, err := benchHubClient(procs.hub.Kubeconfig)
	if err != nil {
		return err
	}
	// A work the agent holds through the outage, as agents do.
	hold := func() error { return c.Create(ctx, benchManifestWork(cluster, "before")) }
	if err := waitApplied(ctx, c, cluster, []string{"before"}, hold, time.Minute, nil); err != nil {
		return fmt.Errorf("%w\nagent output:\n%s", err, agentProc.Tail(20))
	}

	procs.hub.Kill()
	select {
	case <-time.After(outage):
	case <-ctx.Done():
		return ctx.Err()
	}
	if agentProc.Exited() {
		return fmt.Errorf("the agent stopped during the hub's outage:\n%s", agentProc.Tail(20))
	}
	restarted, err := framework.StartHubProcessOnPort(ctx, e.binDir, procs.hub.DataDir, procs.hub.Port, 2*time.Minute)
	if err != nil {
		return err
	}
	procs.hub = restarted
	ready := time.Now()
	if c, err = benchHubClient(restarted.Kubeconfig); err != nil {
		return err
	}

	created := map[string]time.Time{}
	names := make([]string, n)
	for i := range n {
		names[i] = fmt.Sprintf("after-%02d", i)
	}
	create := func() error {
		for _, name := range names {
			created[name] = time.Now()
			if err := c.Create(ctx, benchManifestWork(cluster, name)); err != nil {
				return err
			}
		}
		return nil
	}
	applied := map[string]time.Time{}
	if err := waitApplied(ctx, c, cluster, names, create, 2*time.Minute, applied); err != nil {
		return fmt.Errorf("%w\nagent output:\n%s", err, agentProc.Tail(30))
	}
	latencies := make([]time.Duration, 0, n)
	first := time.Time{}
	for _, name := range names {
		latencies = append(latencies, applied[name].Sub(created[name]))
		if first.IsZero() || applied[name].Before(first) {
			first = applied[name]
		}
	}
	slices.Sort(latencies)
	p50, p99 := latencies[len(latencies)/2], latencies[len(latencies)*99/100]
	what := fmt.Sprintf("first %d works after a %s hub outage (SIGKILL)", n, outage)
	row("create → Applied on the hub, p50, "+what, millis(p50), "")
	row("create → Applied on the hub, p99, "+what, millis(p99), "< 2 s")
	row("hub ready again → first work Applied", millis(first.Sub(ready)), "")
	return nil
}

// joinAndAccept starts an agent for cluster on the spoke with `flotilla join
// --run` and accepts it on the hub; the caller stops the returned process.
func joinAndAccept(ctx context.Context, e *env, spokeKubeconfig, hubKubeconfig string, join joinInfo, cluster string) (*framework.Process, error) {
	agentProc, err := framework.StartProcess(ctx, filepath.Join(e.binDir, "flotilla"), "join", "--kubeconfig", spokeKubeconfig,
		"--hub-token", join.Token, "--hub-apiserver", join.URL, "--cluster-name", cluster, "--run")
	if err != nil {
		return nil, err
	}
	if _, err := flotilla(ctx, "accept", "--kubeconfig", hubKubeconfig, "--clusters", cluster, "--wait", "--timeout", "2m"); err != nil {
		agentProc.Stop(time.Minute)
		return nil, fmt.Errorf("%w\nagent output:\n%s", err, agentProc.Tail(20))
	}
	return agentProc, nil
}

// benchHubClient is a client of the hub that knows its kinds and watches.
func benchHubClient(kubeconfig string) (client.WithWatch, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 200, 400
	return client.NewWithWatch(cfg, client.Options{Scheme: hub.Scheme()})
}

// waitApplied watches the works of namespace cluster, calls create, and
// waits until every work of names is Applied, recording in applied (when
// not nil) when the watch saw each.
func waitApplied(ctx context.Context, c client.WithWatch, cluster string, names []string, create func() error, timeout time.Duration, applied map[string]time.Time) error {
	if applied == nil {
		applied = map[string]time.Time{}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	w, err := c.Watch(ctx, &workv1.ManifestWorkList{}, client.InNamespace(cluster))
	if err != nil {
		return err
	}
	defer w.Stop()
	// Created beside the watch, so that each Applied is seen when it comes.
	created := make(chan error, 1)
	go func() { created <- create() }()
	createDone := false
	for !createDone || len(applied) < len(names) {
		select {
		case err := <-created:
			if err != nil {
				return err
			}
			createDone = true
		case ev, ok := <-w.ResultChan():
			if !ok {
				return fmt.Errorf("%d of %d works Applied when the watch ended", len(applied), len(names))
			}
			mw, isWork := ev.Object.(*workv1.ManifestWork)
			if !isWork || ev.Type == watch.Deleted || !slices.Contains(names, mw.Name) {
				continue
			}
			if _, seen := applied[mw.Name]; !seen && meta.IsStatusConditionTrue(mw.Status.Conditions, workv1.WorkApplied) {
				applied[mw.Name] = time.Now()
			}
		case <-ctx.Done():
			return fmt.Errorf("%d of %d works Applied after %s", len(applied), len(names), timeout)
		}
	}
	return nil
}
