package services

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/flotilla-io/flotilla/internal/mcs"
)

// The import side's view of what it wrote into the cluster: an informer
// per kind, of the agent's own objects only (by their managed-by label),
// and the agent's writes that the informer has not delivered yet. The
// import side reads nothing else from the cluster: a steady state costs
// the cluster no request beyond these watches.

// bySliceService indexes EndpointSlices by namespace and the
// multi-cluster service they belong to.
const bySliceService = "service"

// ownKind is one kind of object the import side writes into the cluster.
type ownKind struct {
	inf toolscache.SharedIndexInformer
	// key is the import key (importKey) of an object of the kind, "" for
	// none.
	key func(client.Object) string

	mu sync.Mutex
	// written holds, by namespace/name, the agent's last write of each
	// object until the informer delivers it (or a later version): a nil
	// obj for a delete.
	written map[string]ownWrite
}

// ownWrite is one write of the agent that its informer has not delivered.
type ownWrite struct {
	obj client.Object
	uid types.UID
}

// ownObjects are the import side's informers of the cluster.
type ownObjects struct {
	serviceImports, services, slices *ownKind
}

// newOwnObjects makes the informers of the agent's objects in the cluster
// that c lists and watches; told is given the import key and the set of
// each object that changes or goes once the informers have synced.
func newOwnObjects(c client.WithWatch, told func(set, key string)) *ownObjects {
	app := labels.SelectorFromSet(labels.Set{appManagedByLabel: mcs.ManagedBy}).String()
	eps := labels.SelectorFromSet(labels.Set{discoveryv1.LabelManagedBy: mcs.ManagedBy}).String()
	o := &ownObjects{
		serviceImports: newOwnKind(c, app, &mcsv1beta1.ServiceImport{}, func() client.ObjectList { return &mcsv1beta1.ServiceImportList{} },
			func(o client.Object) string { return importKey(o.GetNamespace(), o.GetName()) }, nil, told),
		services: newOwnKind(c, app, &corev1.Service{}, func() client.ObjectList { return &corev1.ServiceList{} },
			func(o client.Object) string { return labelKey(o, mcs.ServiceNameLabel) }, nil, told),
		slices: newOwnKind(c, eps, &discoveryv1.EndpointSlice{}, func() client.ObjectList { return &discoveryv1.EndpointSliceList{} },
			func(o client.Object) string { return labelKey(o, mcsv1beta1.LabelServiceName) },
			toolscache.Indexers{bySliceService: func(obj any) ([]string, error) {
				if k := labelKey(obj.(client.Object), mcsv1beta1.LabelServiceName); k != "" {
					return []string{k}, nil
				}
				return nil, nil
			}}, told),
	}
	return o
}

func newOwnKind(c client.WithWatch, sel string, obj runtime.Object, list func() client.ObjectList, key func(client.Object) string,
	indexers toolscache.Indexers, told func(set, key string)) *ownKind {
	lw := &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.LabelSelector = sel
			l := list()
			return l, c.List(ctx, l, &client.ListOptions{Raw: &opts})
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.LabelSelector = sel
			return c.Watch(ctx, list(), &client.ListOptions{Raw: &opts})
		},
	}
	if indexers == nil {
		indexers = toolscache.Indexers{}
	}
	k := &ownKind{key: key, written: map[string]ownWrite{}}
	k.inf = toolscache.NewSharedIndexInformer(lw, obj, 0, indexers)
	_ = k.inf.SetTransform(cache.TransformStripManagedFields())
	on := func(obj any, deleted bool) {
		if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		o, ok := obj.(client.Object)
		if !ok {
			return
		}
		k.observed(o, deleted)
		// What the first list brings is what the start's comparison
		// covers already: only later changes are passed on.
		if k.inf.HasSynced() {
			if key := k.key(o); key != "" {
				told(o.GetLabels()[mcs.ClusterSetLabel], key)
			}
		}
	}
	_, _ = k.inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { on(obj, false) },
		UpdateFunc: func(old, obj any) {
			if old.(client.Object).GetResourceVersion() != obj.(client.Object).GetResourceVersion() {
				on(obj, false)
			}
		},
		DeleteFunc: func(obj any) { on(obj, true) },
	})
	return k
}

// run runs the informers until ctx ends.
func (o *ownObjects) run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, k := range o.kinds() {
		wg.Go(func() { k.inf.RunWithContext(ctx) })
	}
	wg.Wait()
}

// waitForSync waits until every informer has listed; false if ctx ended.
func (o *ownObjects) waitForSync(ctx context.Context) bool {
	var synced []toolscache.InformerSynced
	for _, k := range o.kinds() {
		synced = append(synced, k.inf.HasSynced)
	}
	return toolscache.WaitForCacheSync(ctx.Done(), synced...)
}

func (o *ownObjects) kinds() []*ownKind { return []*ownKind{o.serviceImports, o.services, o.slices} }

// observed drops the agent's write of o once the informer holds it or a
// later version of it, or o is gone.
func (k *ownKind) observed(o client.Object, deleted bool) {
	name := objectKey(o)
	k.mu.Lock()
	defer k.mu.Unlock()
	w, ok := k.written[name]
	switch {
	case !ok:
	case deleted && (w.obj == nil || w.uid == o.GetUID()):
		delete(k.written, name)
	case !deleted && (w.obj == nil && w.uid != o.GetUID() || w.obj != nil && caughtUp(o, w.obj)):
		delete(k.written, name)
	}
}

// caughtUp says whether got, as the informer holds it, is write w or later.
func caughtUp(got, w client.Object) bool {
	if got.GetUID() != w.GetUID() {
		return false
	}
	c, err := resourceversion.CompareResourceVersion(got.GetResourceVersion(), w.GetResourceVersion())
	return err != nil || c >= 0
}

// get returns a copy of the object namespace/name as the agent last wrote
// or saw it, or nil.
func (k *ownKind) get(namespace, name string) client.Object {
	key := namespace + "/" + name
	obj, exists, _ := k.inf.GetStore().GetByKey(key)
	var got client.Object
	if exists {
		got = obj.(client.Object)
	}
	k.mu.Lock()
	w, ok := k.written[key]
	if ok && got != nil && (w.obj == nil && got.GetUID() != w.uid || w.obj != nil && caughtUp(got, w.obj)) {
		delete(k.written, key)
		ok = false
	}
	k.mu.Unlock()
	switch {
	case ok && w.obj == nil:
		return nil
	case ok:
		return w.obj.DeepCopyObject().(client.Object)
	case got != nil:
		return got.DeepCopyObject().(client.Object)
	}
	return nil
}

// list returns copies of the objects for which keep is true, each as the
// agent last wrote or saw it; index and value, when index is set, narrow
// the informer's objects first.
func (k *ownKind) list(index, value string, keep func(client.Object) bool) []client.Object {
	var objs []any
	if index != "" {
		objs, _ = k.inf.GetIndexer().ByIndex(index, value)
	} else {
		objs = k.inf.GetStore().List()
	}
	byName := map[string]client.Object{}
	for _, obj := range objs {
		o := obj.(client.Object)
		byName[objectKey(o)] = o
	}
	k.mu.Lock()
	for name, w := range k.written {
		got := byName[name]
		if w.obj != nil {
			if got != nil && caughtUp(got, w.obj) {
				continue
			}
			if index == "" || got != nil || k.key(w.obj) == value {
				byName[name] = w.obj
			}
		} else if got != nil && got.GetUID() == w.uid {
			delete(byName, name)
		}
	}
	k.mu.Unlock()
	var out []client.Object
	for _, o := range byName {
		if keep == nil || keep(o) {
			out = append(out, o.DeepCopyObject().(client.Object))
		}
	}
	return out
}

// wrote records obj as the agent's last write of it (a copy).
func (k *ownKind) wrote(obj client.Object) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.written[objectKey(obj)] = ownWrite{obj: obj.DeepCopyObject().(client.Object), uid: obj.GetUID()}
}

// deleted records that the agent deleted obj.
func (k *ownKind) deleted(obj client.Object) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.written[objectKey(obj)] = ownWrite{uid: obj.GetUID()}
}

// forget drops what the agent wrote of obj (a write found it changed
// since): the informer's copy is read from now on.
func (k *ownKind) forget(obj client.Object) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.written, objectKey(obj))
}

func objectKey(o client.Object) string { return o.GetNamespace() + "/" + o.GetName() }

// labelKey is the import key of o by its label holding the service name,
// or "" without one.
func labelKey(o client.Object, label string) string {
	name := o.GetLabels()[label]
	if name == "" {
		return ""
	}
	return importKey(o.GetNamespace(), name)
}
