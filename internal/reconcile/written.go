package reconcile

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Written remembers the resourceVersion each object had after a
// controller's own last write of it, so that a reconcile can tell that
// its cached copy predates that write. The write's watch event is on its
// way and brings another reconcile; a pass on the older copy would only
// compute the same write again, or meet a conflict. Resource versions are
// compared as Kubernetes allows since 1.35: integers, ordered per
// resource. The zero value is ready to use.
type Written struct {
	mu sync.Mutex
	rv map[types.NamespacedName]string
}

// Record notes obj's resourceVersion as the controller left it.
func (w *Written) Record(obj client.Object) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.rv == nil {
		w.rv = map[types.NamespacedName]string{}
	}
	w.rv[client.ObjectKeyFromObject(obj)] = obj.GetResourceVersion()
}

// Forget drops what was noted of the object named key (it is gone).
func (w *Written) Forget(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.rv, key)
}

// Stale says whether obj is older than the controller's last write of
// it. Versions that are not comparable are never stale.
func (w *Written) Stale(obj client.Object) bool {
	w.mu.Lock()
	last := w.rv[client.ObjectKeyFromObject(obj)]
	w.mu.Unlock()
	return IsOlder(obj.GetResourceVersion(), last)
}

// IsOlder says whether resourceVersion rv is older than last; false when
// last is empty or either is not a well-formed resource version.
func IsOlder(rv, last string) bool {
	if last == "" {
		return false
	}
	c, err := resourceversion.CompareResourceVersion(rv, last)
	return err == nil && c < 0
}
