package workreplicaset

import (
	"sync"
	"time"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// writtenTTL bounds how long a write the cache has not shown is trusted
// over the cache: long enough for any watch lag, short enough that a work
// deleted meanwhile by someone else is noticed.
const writtenTTL = time.Minute

// writtenWorks remembers the ManifestWorks this controller created or
// updated until its cache shows them. A rollout decided on a cache that
// lags its own writes would push the next cluster while the last one's
// work still looks absent or old: with maxConcurrency 1, two clusters at
// once. Reading the works through this overlay makes the controller see
// its own writes, as the API server does.
type writtenWorks struct {
	mu sync.Mutex
	// byOwner maps a replica set's owner value to its works written and
	// not yet seen in the cache, by cluster.
	byOwner map[string]map[string]writtenWork
}

type writtenWork struct {
	work *workv1.ManifestWork
	at   time.Time
}

// remember records a work as written at now.
func (w *writtenWorks) remember(owner string, work *workv1.ManifestWork, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byOwner == nil {
		w.byOwner = map[string]map[string]writtenWork{}
	}
	if w.byOwner[owner] == nil {
		w.byOwner[owner] = map[string]writtenWork{}
	}
	w.byOwner[owner][work.Namespace] = writtenWork{work: work.DeepCopy(), at: now}
}

// forget drops what is remembered of a replica set's works: on deletion,
// or of one cluster whose work it deletes.
func (w *writtenWorks) forget(owner string, clusters ...string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(clusters) == 0 {
		delete(w.byOwner, owner)
		return
	}
	for _, c := range clusters {
		delete(w.byOwner[owner], c)
	}
}

// overlay puts into cached (works by cluster, from the cache) each work
// written for owner that the cache does not show yet, and forgets those it
// shows: the same object (UID) at the written generation or later. A
// written work whose object the cache shows replaced by another is stale,
// as is one older than writtenTTL.
func (w *writtenWorks) overlay(owner string, cached map[string]*workv1.ManifestWork, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for c, ww := range w.byOwner[owner] {
		cur := cached[c]
		switch {
		case now.Sub(ww.at) > writtenTTL:
			delete(w.byOwner[owner], c)
		case cur == nil:
			cached[c] = ww.work.DeepCopy()
		case cur.UID != ww.work.UID || cur.Generation >= ww.work.Generation:
			delete(w.byOwner[owner], c)
		default:
			cached[c] = ww.work.DeepCopy()
		}
	}
	if len(w.byOwner[owner]) == 0 {
		delete(w.byOwner, owner)
	}
}
