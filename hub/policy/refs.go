package policy

import (
	"context"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/flotilla-io/flotilla/internal/policytemplate"
)

// refWatches watches exactly the objects that roots' hub templates read,
// one metadata-only watch per object (by name), and enqueues the roots
// that read an object when it changes. Nothing else of ConfigMaps and
// Secrets is watched or cached, and no data at all. It also remembers
// which roots have hub templates, so that a cluster's new labels resolve
// those again.
type refWatches struct {
	client metadata.Interface

	mu sync.Mutex
	// ctx and queue are set by Start.
	ctx   context.Context
	queue workqueue.TypedRateLimitingInterface[reconcile.Request]
	// byRoot holds the objects each root with hub templates read; a root
	// with hub templates that read nothing has an empty set.
	byRoot  map[types.NamespacedName]map[policytemplate.Ref]bool
	watches map[policytemplate.Ref]*refWatch
}

type refWatch struct {
	stop  context.CancelFunc
	users map[types.NamespacedName]bool
}

func newRefWatches(c metadata.Interface) *refWatches {
	return &refWatches{client: c, byRoot: map[types.NamespacedName]map[policytemplate.Ref]bool{}, watches: map[policytemplate.Ref]*refWatch{}}
}

// Start keeps the queue that changes are reported to; watches run until ctx ends.
func (w *refWatches) Start(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ctx, w.queue = ctx, q
	for ref, rw := range w.watches {
		if rw.stop == nil {
			rw.stop = w.start(ref)
		}
	}
	return nil
}

// track records what root's hub templates read now: watches start for new
// objects and stop for objects no root reads any longer. hasTemplates false
// forgets the root.
func (w *refWatches) track(root types.NamespacedName, hasTemplates bool, refs []policytemplate.Ref) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	now := map[policytemplate.Ref]bool{}
	for _, r := range refs {
		now[r] = true
	}
	for r := range w.byRoot[root] {
		if now[r] {
			continue
		}
		rw := w.watches[r]
		delete(rw.users, root)
		if len(rw.users) == 0 {
			if rw.stop != nil {
				rw.stop()
			}
			delete(w.watches, r)
		}
	}
	if !hasTemplates {
		delete(w.byRoot, root)
		return
	}
	w.byRoot[root] = now
	for r := range now {
		rw, ok := w.watches[r]
		if !ok {
			rw = &refWatch{users: map[types.NamespacedName]bool{}}
			if w.ctx != nil {
				rw.stop = w.start(r)
			}
			w.watches[r] = rw
		}
		rw.users[root] = true
	}
}

// withTemplates reports whether root had hub templates when last resolved.
func (w *refWatches) withTemplates(root types.NamespacedName) bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.byRoot[root]
	return ok
}

// start watches one object by name (all of its kind in its namespace,
// for a list); w.mu is held.
func (w *refWatches) start(ref policytemplate.Ref) context.CancelFunc {
	ctx, cancel := context.WithCancel(w.ctx)
	inf := metadatainformer.NewFilteredMetadataInformer(w.client, ref.Resource, ref.Namespace, 0, toolscache.Indexers{},
		func(o *metav1.ListOptions) {
			if ref.Name != "" {
				o.FieldSelector = fields.OneTermEqualSelector("metadata.name", ref.Name).String()
			}
		}).Informer()
	changed := func(any) { w.enqueue(ref) }
	_, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: changed,
		UpdateFunc: func(old, obj any) {
			o, ok1 := old.(*metav1.PartialObjectMetadata)
			n, ok2 := obj.(*metav1.PartialObjectMetadata)
			if ok1 && ok2 && o.ResourceVersion == n.ResourceVersion {
				return
			}
			w.enqueue(ref)
		},
		DeleteFunc: changed,
	})
	if err != nil {
		klog.FromContext(ctx).Error(err, "Cannot watch an object that hub templates read", "kind", ref.Kind, "object", klog.KRef(ref.Namespace, ref.Name))
	}
	go inf.RunWithContext(ctx)
	return cancel
}

// enqueue asks for the roots that read ref.
func (w *refWatches) enqueue(ref policytemplate.Ref) {
	w.mu.Lock()
	defer w.mu.Unlock()
	rw, ok := w.watches[ref]
	if !ok {
		return
	}
	for root := range rw.users {
		w.queue.Add(reconcile.Request{NamespacedName: root})
	}
}
