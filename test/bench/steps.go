package main

import (
	"context"
	"time"
)

// The steps scenarios share: what a scenario started, stopped on every
// path; something done once a tick; requests of several kinds timed in
// turns.

// cleanups is what a scenario started and must stop, on every path: its
// steps add to it as they start things, and the scenario runs it once,
// deferred, the last started first.
type cleanups struct{ fs []func() }

// add adds what stops something just started.
func (c *cleanups) add(f func()) { c.fs = append(c.fs, f) }

// run stops everything added, the last added first; a second run does
// nothing, so run can be both deferred and handed out as a stop func.
func (c *cleanups) run() {
	for len(c.fs) > 0 {
		f := c.fs[len(c.fs)-1]
		c.fs = c.fs[:len(c.fs)-1]
		f()
	}
}

// everyTick calls step once a tick of d, with 0, 1, 2, …, until it says
// it is done or fails, or ctx ends.
func everyTick(ctx context.Context, d time.Duration, step func(i int) (done bool, err error)) error {
	tick := time.NewTicker(d)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		if done, err := step(i); done || err != nil {
			return err
		}
	}
}

// takeTurns times rounds of do(0), do(1), …, do(kinds-1): the kinds take
// turns, request by request, so that the load of the shared machine falls
// on all of them alike. It returns each kind's times, less those of the
// first skip rounds (which open connections), and stops at the first
// error.
func takeTurns(rounds, skip, kinds int, do func(kind int) error) ([][]time.Duration, error) {
	times := make([][]time.Duration, kinds)
	for i := range rounds {
		for k := range kinds {
			start := time.Now()
			if err := do(k); err != nil {
				return nil, err
			}
			if i >= skip {
				times[k] = append(times[k], time.Since(start))
			}
		}
	}
	return times, nil
}
