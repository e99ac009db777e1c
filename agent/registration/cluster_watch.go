package registration

import (
	"context"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
)

// clusterWatch follows the agent's own ManagedCluster on the hub with one
// watch scoped to its name, so that the status controller reads it every
// lease period without asking the hub. A read every lease period was one
// of the two requests of every idle cluster's heartbeat: 167 a second at
// 10,000 clusters. A name-scoped watch costs the hub one watcher that
// only this cluster's changes reach, opened again when the hub ends it
// (every 5 to 10 minutes), from its watch cache.
type clusterWatch struct {
	informer toolscache.SharedIndexInformer
	// handled is changed's registration: synced once the handler has
	// been called for everything the first list brought.
	handled toolscache.ResourceEventHandlerRegistration
	name    string
	changed func()
}

// newClusterWatch returns a watch of ManagedCluster name through c that
// calls changed when the cluster is first seen, when the hub changes its
// lease duration, and when it is deleted. It does nothing until run.
func newClusterWatch(c client.WithWatch, name string, changed func()) (*clusterWatch, error) {
	byName := fields.OneTermEqualSelector("metadata.name", name).String()
	lw := &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.FieldSelector = byName
			list := &clusterv1.ManagedClusterList{}
			return list, c.List(ctx, list, &client.ListOptions{Raw: &opts})
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.FieldSelector = byName
			return c.Watch(ctx, &clusterv1.ManagedClusterList{}, &client.ListOptions{Raw: &opts})
		},
	}
	inf := toolscache.NewSharedIndexInformer(lw, &clusterv1.ManagedCluster{}, 0, toolscache.Indexers{})
	if err := inf.SetTransform(cache.TransformStripManagedFields()); err != nil {
		return nil, err
	}
	// Changes of the status are not passed on: the hub's lease controller
	// writes conditions the agent writes too, and each reacting to the
	// other's write at once could go back and forth without end. The agent
	// looks at those every lease period, as before it watched.
	handled, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { changed() },
		UpdateFunc: func(old, obj any) {
			if old.(*clusterv1.ManagedCluster).Spec.LeaseDurationSeconds != obj.(*clusterv1.ManagedCluster).Spec.LeaseDurationSeconds {
				changed()
			}
		},
		DeleteFunc: func(any) { changed() },
	})
	if err != nil {
		return nil, err
	}
	return &clusterWatch{informer: inf, handled: handled, name: name, changed: changed}, nil
}

// run watches until ctx ends. When the first list brings no cluster, no
// event calls changed: it is called once that list has been handled, so
// that the status controller, which waits for the watch, asks the hub.
func (w *clusterWatch) run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		select {
		case <-ctx.Done():
		case <-w.handled.HasSyncedChecker().Done():
			if _, ok, err := w.informer.GetStore().GetByKey(w.name); err == nil && !ok {
				w.changed()
			}
		}
	})
	w.informer.RunWithContext(ctx)
}

// get returns a copy of the ManagedCluster as last seen, or nil when the
// hub holds none; watching is false until the watch has listed it. The
// store is read first: the informer adds an object to it before it calls
// the handler, but says it has synced only some time after (on a
// goroutine of its own), and a status controller woken by the handler
// that asked HasSynced first could find nothing and wait for a wake that
// never comes.
func (w *clusterWatch) get() (mc *clusterv1.ManagedCluster, watching bool) {
	obj, ok, err := w.informer.GetStore().GetByKey(w.name)
	if err == nil && ok {
		return obj.(*clusterv1.ManagedCluster).DeepCopy(), true
	}
	return nil, w.informer.HasSynced()
}
