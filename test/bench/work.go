package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// workSettle is how long the agent holds its works before its RSS is read.
const workSettle = 10 * time.Second

var (
	benchWorks    = flag.Int("works", 1000, "work: how many ManifestWorks one cluster holds")
	benchWorkRate = flag.Int("work-rate", 50, "work: ManifestWorks created per second")
)

// benchWork delivers many ManifestWorks to one cluster with a real agent
// process, created at a steady rate, and reports the latency from each
// create to Applied=True seen on the hub, the time until all are applied,
// and the agent's RSS holding them.
func benchWork(ctx context.Context, e *env) error {
	n, rate := *benchWorks, *benchWorkRate
	procs, err := startHubAndSpoke(ctx, e, "work")
	if err != nil {
		return err
	}
	defer procs.stop()
	hubProc, spokeProc, join := procs.hub, procs.spoke, procs.join
	const cluster = "bench-work"
	agentProc, err := joinAndAccept(ctx, e, spokeProc.Kubeconfig, hubProc.Kubeconfig, join, cluster)
	if err != nil {
		return err
	}
	defer agentProc.Stop(time.Minute)

	c, err := benchHubClient(hubProc.Kubeconfig)
	if err != nil {
		return err
	}
	w, err := c.Watch(ctx, &workv1.ManifestWorkList{}, client.InNamespace(cluster))
	if err != nil {
		return err
	}
	defer w.Stop()

	var mu sync.Mutex
	created := map[string]time.Time{}
	var latencies []time.Duration
	allApplied := make(chan struct{})
	go func() {
		seen := map[string]bool{}
		for ev := range w.ResultChan() {
			mw, ok := ev.Object.(*workv1.ManifestWork)
			if !ok || ev.Type == watch.Deleted || seen[mw.Name] || !meta.IsStatusConditionTrue(mw.Status.Conditions, workv1.WorkApplied) {
				continue
			}
			seen[mw.Name] = true
			mu.Lock()
			latencies = append(latencies, time.Since(created[mw.Name]))
			done := len(latencies) == n
			mu.Unlock()
			if done {
				close(allApplied)
				return
			}
		}
	}()

	started := time.Now()
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	for i := range n {
		<-tick.C
		mw := benchManifestWork(cluster, fmt.Sprintf("work-%04d", i))
		mu.Lock()
		created[mw.Name] = time.Now()
		mu.Unlock()
		if err := c.Create(ctx, mw); err != nil {
			return err
		}
	}
	select {
	case <-allApplied:
	case <-time.After(5 * time.Minute):
		mu.Lock()
		defer mu.Unlock()
		return fmt.Errorf("only %d of %d works Applied after 5 minutes", len(latencies), n)
	case <-ctx.Done():
		return ctx.Err()
	}
	total := time.Since(started)
	select {
	case <-time.After(workSettle):
	case <-ctx.Done():
	}
	rss, err := agentProc.RSS()
	if err != nil {
		return err
	}
	mu.Lock()
	slices.Sort(latencies)
	p50, p99 := latencies[len(latencies)/2], latencies[len(latencies)*99/100]
	mu.Unlock()
	row(fmt.Sprintf("create → Applied on the hub, p50 (%d works at %d/s)", n, rate), millis(p50), "")
	row(fmt.Sprintf("create → Applied on the hub, p99 (%d works at %d/s)", n, rate), millis(p99), "< 1 s")
	row(fmt.Sprintf("%d works created and all Applied", n), seconds(total), "")
	row(fmt.Sprintf("agent RSS holding %d works", n), mib(rss), "< 100 MiB")
	return nil
}

// benchManifestWork is a ManifestWork with one ConfigMap.
func benchManifestWork(ns, name string) *workv1.ManifestWork {
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Data:       map[string]string{"work": name},
	}
	return &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{
			Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{Object: cm}}},
		}},
	}
}

func millis(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }
