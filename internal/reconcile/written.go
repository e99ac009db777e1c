package reconcile

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// StaleRequeue is how soon a reconcile that met a stale cached copy looks
// again: the cache is usually milliseconds behind. The write's own watch
// event does not always come back as a reconcile (predicates drop the
// status updates a controller makes itself), hence the requeue.
const StaleRequeue = 200 * time.Millisecond

// staleFor bounds how long a write makes older copies stale: a cache that
// has not caught up by then (it follows another API server whose versions
// are not comparable, say) is reconciled as it is.
const staleFor = 10 * time.Second

// LastWrite is the resourceVersion an object had after a controller's own
// last write of it, and when that was, so that a reconcile can tell that
// its cached copy predates that write: a pass on the older copy would only
// compute the same write again, or meet a conflict. Resource versions are
// compared as Kubernetes allows since 1.35: integers, ordered per resource.
type LastWrite struct {
	rv string
	at time.Time
}

// Record notes resourceVersion rv, written now.
func (w *LastWrite) Record(rv string) { *w = LastWrite{rv: rv, at: time.Now()} }

// Stale says whether rv is older than the last write, noted within the last
// ten seconds. Versions that are not comparable are never stale.
func (w *LastWrite) Stale(rv string) bool {
	if w.rv == "" || time.Since(w.at) > staleFor {
		return false
	}
	c, err := resourceversion.CompareResourceVersion(rv, w.rv)
	return err == nil && c < 0
}

// Written is a LastWrite per object, for a controller of many objects.
// The zero value is ready to use.
type Written struct {
	mu   sync.Mutex
	last map[types.NamespacedName]LastWrite
}

// Record notes obj's resourceVersion as the controller left it.
func (w *Written) Record(obj client.Object) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.last == nil {
		w.last = map[types.NamespacedName]LastWrite{}
	}
	var l LastWrite
	l.Record(obj.GetResourceVersion())
	w.last[client.ObjectKeyFromObject(obj)] = l
}

// Forget drops what was noted of the object named key (it is gone).
func (w *Written) Forget(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.last, key)
}

// Stale says whether obj is older than the controller's last write of it.
func (w *Written) Stale(obj client.Object) bool {
	w.mu.Lock()
	l := w.last[client.ObjectKeyFromObject(obj)]
	w.mu.Unlock()
	return l.Stale(obj.GetResourceVersion())
}
