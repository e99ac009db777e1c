package workreplicaset

import (
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/resourceversion"
)

// writtenRevisions remembers the ControllerRevisions this controller
// created, changed or deleted until its cache shows that, as writtenWorks
// does for works: a reconcile on a cache that lags its own writes would
// record a revision twice, number one wrongly, or, missing a revision's
// failed mark, roll the failed revision out again.
type writtenRevisions struct {
	mu sync.Mutex
	// byOwner maps a replica set's owner value to its revisions written
	// and not yet seen in the cache, by name; a nil revision was deleted.
	byOwner map[string]map[string]writtenRevision
}

type writtenRevision struct {
	cr *appsv1.ControllerRevision
	at time.Time
}

// remember records cr as written at now.
func (w *writtenRevisions) remember(owner string, cr *appsv1.ControllerRevision, now time.Time) {
	w.set(owner, cr.Name, writtenRevision{cr: cr.DeepCopy(), at: now})
}

// forgetDeleted records that the revision name was deleted at now.
func (w *writtenRevisions) forgetDeleted(owner, name string, now time.Time) {
	w.set(owner, name, writtenRevision{at: now})
}

func (w *writtenRevisions) set(owner, name string, wr writtenRevision) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byOwner == nil {
		w.byOwner = map[string]map[string]writtenRevision{}
	}
	if w.byOwner[owner] == nil {
		w.byOwner[owner] = map[string]writtenRevision{}
	}
	w.byOwner[owner][name] = wr
}

// forget drops what is remembered of a replica set's revisions.
func (w *writtenRevisions) forget(owner string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.byOwner, owner)
}

// overlay puts into cached (revisions by name, from the cache) each
// revision written for owner that the cache does not show yet, removes
// those deleted that it still shows, and forgets the writes it shows: a
// cached copy of the written resourceVersion or later, or, for a deletion,
// no copy. A write older than writtenTTL is forgotten too.
func (w *writtenRevisions) overlay(owner string, cached map[string]*appsv1.ControllerRevision, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for name, wr := range w.byOwner[owner] {
		cur := cached[name]
		switch {
		case now.Sub(wr.at) > writtenTTL:
			delete(w.byOwner[owner], name)
		case wr.cr == nil && cur == nil:
			delete(w.byOwner[owner], name)
		case wr.cr == nil:
			delete(cached, name)
		case cur != nil && cur.UID == wr.cr.UID && !olderVersion(cur.ResourceVersion, wr.cr.ResourceVersion):
			delete(w.byOwner[owner], name)
		default:
			cached[name] = wr.cr.DeepCopy()
		}
	}
	if len(w.byOwner[owner]) == 0 {
		delete(w.byOwner, owner)
	}
}

// olderVersion says whether resourceVersion a is older than b; versions
// that cannot be compared are not.
func olderVersion(a, b string) bool {
	c, err := resourceversion.CompareResourceVersion(a, b)
	return err == nil && c < 0
}
