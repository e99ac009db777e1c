package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

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
			a.observe(ev, time.Now())
		}
	}()
	return a, nil
}

// observe records at as when the event's work was Applied, unless it was
// seen Applied before.
func (a *appliedWatch) observe(ev watch.Event, at time.Time) {
	mw, ok := ev.Object.(*workv1.ManifestWork)
	if !ok || ev.Type == watch.Deleted || !meta.IsStatusConditionTrue(mw.Status.Conditions, workv1.WorkApplied) {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, seen := a.applied[mw.Name]; !seen {
		a.applied[mw.Name] = at
	}
}

// count is how many works have been seen Applied.
func (a *appliedWatch) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.applied)
}

// wait waits up to timeout until every work of created (its name and
// when it was created) is Applied, and returns the create → Applied
// times, sorted, and when the last of them was seen Applied.
func (a *appliedWatch) wait(ctx context.Context, created map[string]time.Time, timeout time.Duration) ([]time.Duration, time.Time, error) {
	var (
		out  []time.Duration
		last time.Time
	)
	err := waitFor(ctx, timeout, func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		out, last = out[:0], time.Time{}
		for name, at := range created {
			done, ok := a.applied[name]
			if !ok {
				return false
			}
			out = append(out, done.Sub(at))
			if done.After(last) {
				last = done
			}
		}
		return true
	})
	if err != nil {
		return nil, time.Time{}, err
	}
	slices.Sort(out)
	return out, last, nil
}

// latencies is wait, saying in its error how many works were Applied.
func (a *appliedWatch) latencies(ctx context.Context, created map[string]time.Time, timeout time.Duration) ([]time.Duration, error) {
	out, _, err := a.wait(ctx, created, timeout)
	if err != nil {
		return nil, fmt.Errorf("%d of %d works Applied: %w", a.count(), len(created), err)
	}
	return out, nil
}

// createWorks creates n ManifestWorks in namespace ns, the i-th named
// name(i), one every d, and returns when each was created.
func createWorks(ctx context.Context, c client.Client, ns string, n int, d time.Duration, name func(i int) string) (map[string]time.Time, error) {
	created := map[string]time.Time{}
	if n == 0 {
		return created, nil
	}
	err := everyTick(ctx, d, func(i int) (bool, error) {
		mw := benchManifestWork(ns, name(i))
		created[mw.Name] = time.Now()
		if err := c.Create(ctx, mw); err != nil {
			return false, err
		}
		return i == n-1, nil
	})
	return created, err
}
