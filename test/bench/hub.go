package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/flotilla-io/flotilla/test/framework"
)

// hubRuns is how many cold and warm starts are timed; the median is shown.
const hubRuns = 3

// idleSettle is how long the hub runs before its idle RSS is read.
const idleSettle = 20 * time.Second

// benchHub measures the embedded hub: cold start to ready, warm restart to
// ready, and resident memory when idle.
func benchHub(ctx context.Context, e *env) error {
	var cold, warm []time.Duration
	var rss int64
	for i := range hubRuns {
		dir := filepath.Join(e.workDir, fmt.Sprintf("hub-%d", i))
		started := time.Now()
		hub, err := framework.StartHubProcess(ctx, e.binDir, dir, 2*time.Minute)
		if err != nil {
			return err
		}
		cold = append(cold, time.Since(started))
		if _, err := hub.Stop(time.Minute); err != nil {
			return err
		}

		started = time.Now()
		hub, err = framework.StartHubProcess(ctx, e.binDir, dir, 2*time.Minute)
		if err != nil {
			return err
		}
		warm = append(warm, time.Since(started))
		if i == hubRuns-1 {
			select {
			case <-time.After(idleSettle):
			case <-ctx.Done():
			}
			if rss, err = hub.RSS(); err != nil {
				return err
			}
		}
		if _, err := hub.Stop(time.Minute); err != nil {
			return err
		}
		os.RemoveAll(dir)
	}
	row("cold start to ready (median of 3)", seconds(median(cold)), "< 5 s")
	row("warm restart to ready (median of 3)", seconds(median(warm)), "< 5 s")
	row(fmt.Sprintf("idle RSS (%s after ready)", idleSettle), mib(rss), "< 400 MiB")
	return nil
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
