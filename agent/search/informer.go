package search

import (
	"context"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
)

// item is what an informer keeps of an object: its compact form, and the
// metadata the informer's store keys it by (the same strings, shared).
type item struct {
	metav1.ObjectMeta
	obj searchv1alpha1.Object
}

func (i *item) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject copies the item shallowly: nothing changes an item once
// the informer's transform made it.
func (i *item) DeepCopyObject() runtime.Object { c := *i; return &c }

func groupResource(r searchv1alpha1.SearchResource) schema.GroupResource {
	return schema.GroupResource{Group: r.Group, Resource: r.Resource}
}

// resourceInformer indexes one resource of the cluster.
type resourceInformer struct {
	resource searchv1alpha1.SearchResource
	cancel   context.CancelFunc
	done     chan struct{}
}

func (ri *resourceInformer) stop() {
	ri.cancel()
	<-ri.done
}

// start runs the informer of r until the returned resourceInformer is
// stopped. It first reads what the hub holds of r, so that objects the
// hub holds at their version are not sent again, and once the informer
// has listed the cluster, deletes what the hub holds and the cluster no
// longer has.
func (c *collector) start(ctx context.Context, r searchv1alpha1.SearchResource) *resourceInformer {
	ctx, cancel := context.WithCancel(ctx)
	ri := &resourceInformer{resource: r, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(ri.done)
		c.index(ctx, r)
	}()
	return ri
}

func (c *collector) index(ctx context.Context, r searchv1alpha1.SearchResource) {
	logger := klog.FromContext(ctx).WithValues("resource", groupResource(r).String())
	var known map[types.UID]string
	if err := retry(ctx, func() (err error) {
		known, err = c.hub.versions(ctx, groupResource(r))
		return err
	}); err != nil {
		return
	}
	var mu sync.Mutex
	// unchanged says whether the hub holds o at its version already; only
	// until the first list is compared.
	unchanged := func(o *searchv1alpha1.Object) bool {
		mu.Lock()
		defer mu.Unlock()
		return known != nil && known[o.UID] == o.ResourceVersion
	}
	inf := cache.NewSharedIndexInformer(c.listWatch(r), c.example(r), 0, cache.Indexers{})
	if err := inf.SetTransform(func(o any) (any, error) { return transform(r, o), nil }); err != nil {
		logger.Error(err, "Cannot index a resource")
		return
	}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) {
			c.agent.indexed.Add(1)
			if i, ok := o.(*item); ok && !unchanged(&i.obj) {
				c.pending.upsert(i.obj)
			}
		},
		UpdateFunc: func(old, o any) {
			oi, _ := old.(*item)
			i, ok := o.(*item)
			if ok && (oi == nil || oi.ResourceVersion != i.ResourceVersion) && !unchanged(&i.obj) {
				c.pending.upsert(i.obj)
			}
		},
		DeleteFunc: func(o any) {
			c.agent.indexed.Add(-1)
			if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
				o = t.Obj
			}
			if i, ok := o.(*item); ok {
				c.pending.delete(searchv1alpha1.ObjectRef{Group: r.Group, Resource: r.Resource, UID: i.UID})
			}
		},
	})
	if err != nil {
		logger.Error(err, "Cannot index a resource")
		return
	}
	go inf.Run(ctx.Done())
	defer func() {
		// The objects of a stopped informer are no longer held.
		c.agent.indexed.Add(-int64(len(inf.GetStore().ListKeys())))
	}()
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return
	}
	mu.Lock()
	have := make(map[types.UID]bool, len(known))
	for _, o := range inf.GetStore().List() {
		if i, ok := o.(*item); ok {
			have[i.UID] = true
		}
	}
	for uid := range known {
		if !have[uid] {
			c.pending.delete(searchv1alpha1.ObjectRef{Group: r.Group, Resource: r.Resource, UID: uid})
		}
	}
	known = nil
	mu.Unlock()
	logger.V(1).Info("Indexed a resource", "objects", len(have))
	<-ctx.Done()
}

// example is the type r's informer lists.
func (c *collector) example(r searchv1alpha1.SearchResource) runtime.Object {
	if r.MetadataOnly {
		return &metav1.PartialObjectMetadata{}
	}
	return &unstructured.Unstructured{}
}

// listWatch lists and watches r: its metadata alone when r is
// metadata-only, so that a Secret's data never reaches the agent.
func (c *collector) listWatch(r searchv1alpha1.SearchResource) *cache.ListWatch {
	gvr := schema.GroupVersionResource{Group: r.Group, Version: r.Version, Resource: r.Resource}
	if r.MetadataOnly {
		res := c.agent.metadata.Resource(gvr)
		return &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return res.List(ctx, o)
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				return res.Watch(ctx, o)
			},
		}
	}
	res := c.agent.dynamic.Resource(gvr)
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return res.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return res.Watch(ctx, o)
		},
	}
}

// transform reduces what the informer lists and watches to items; lists
// and tombstones pass as they are.
func transform(r searchv1alpha1.SearchResource, o any) any {
	var obj searchv1alpha1.Object
	switch o := o.(type) {
	case *unstructured.Unstructured:
		obj = compactObject(r, o)
	case *metav1.PartialObjectMetadata:
		obj = compactMeta(r, o)
	default:
		return o
	}
	return &item{
		ObjectMeta: metav1.ObjectMeta{Namespace: obj.Namespace, Name: obj.Name, UID: obj.UID, ResourceVersion: obj.ResourceVersion},
		obj:        obj,
	}
}
