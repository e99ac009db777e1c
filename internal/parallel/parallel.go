// Package parallel runs a controller's independent API writes (one per
// cluster namespace, in a fan-out) a bounded number at a time, so that a
// reconcile touching a thousand clusters waits for the slowest few
// requests rather than for the sum of them all.
package parallel

import (
	"context"
	"sync"
)

// Run runs jobs on at most workers goroutines and returns each job's
// error at its index.
func Run(ctx context.Context, workers int, jobs []func(context.Context) error) []error {
	errs := make([]error, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(max(workers, 1), len(jobs)) {
		wg.Go(func() {
			for i := range next {
				errs[i] = jobs[i](ctx)
			}
		})
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	return errs
}
