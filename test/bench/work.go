package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

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
	const cluster = "bench-work"
	agentProc, err := joinAndAccept(ctx, e, procs.spoke.Kubeconfig, procs.hub.Kubeconfig, procs.join, cluster)
	if err != nil {
		return err
	}
	defer agentProc.Stop(time.Minute)
	c, err := benchHubClient(procs.hub.Kubeconfig)
	if err != nil {
		return err
	}
	w, err := watchApplied(ctx, c, cluster)
	if err != nil {
		return err
	}
	defer w.stop()

	started := time.Now()
	created, err := createWorks(ctx, c, cluster, n, time.Second/time.Duration(rate), func(i int) string { return fmt.Sprintf("work-%04d", i) })
	if err != nil {
		return err
	}
	latencies, last, err := w.wait(ctx, created, 5*time.Minute)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("only %d of %d works Applied after 5 minutes", w.count(), n)
	}
	total := last.Sub(started)
	_ = pause(ctx, workSettle)
	rss, err := agentProc.RSS()
	if err != nil {
		return err
	}
	p50, p99 := percentiles(latencies)
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
