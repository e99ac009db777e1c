package work

import (
	"context"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// appliedGVR is the resource of AppliedManifestWorks.
var appliedGVR = workv1.GroupVersion.WithResource("appliedmanifestworks")

// watcher watches what the agent applied on the spoke: one metadata-only
// informer per resource, started when the first object of that resource is
// applied, selecting only objects with this agent's AgentLabel. Each event
// asks for a reconcile of the works that own the object, so that an object
// changed on the spoke is put back at once, not at the next resync. Its
// stores keep only names, owners and resource versions, which tell a
// reconcile whether an object changed since the agent last saw it.
type watcher struct {
	client   metadata.Interface
	selector string
	hubHash  string
	cluster  string

	mu        sync.Mutex
	ctx       context.Context
	queue     workqueue.TypedRateLimitingInterface[reconcile.Request]
	informers map[schema.GroupVersionResource]toolscache.SharedIndexInformer
}

func newWatcher(c metadata.Interface, agentKey, hubHash, cluster string) *watcher {
	return &watcher{
		client:    c,
		selector:  labels.Set{AgentLabel: agentKey}.String(),
		hubHash:   hubHash,
		cluster:   cluster,
		informers: map[schema.GroupVersionResource]toolscache.SharedIndexInformer{},
	}
}

// Start is the controller's source of spoke events: it keeps the queue,
// and watches AppliedManifestWorks at once.
func (w *watcher) Start(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	w.mu.Lock()
	w.ctx, w.queue = ctx, q
	w.mu.Unlock()
	w.watch(appliedGVR)
	return nil
}

// watch starts the informer of gvr unless it runs.
func (w *watcher) watch(gvr schema.GroupVersionResource) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ctx == nil || w.informers[gvr] != nil {
		return
	}
	inf := metadatainformer.NewFilteredMetadataInformer(w.client, gvr, metav1.NamespaceAll, 0, toolscache.Indexers{},
		func(o *metav1.ListOptions) { o.LabelSelector = w.selector }).Informer()
	_ = inf.SetTransform(slimMetadata)
	handle := func(obj any) { w.enqueueOwners(gvr, obj) }
	_, _ = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: handle,
		UpdateFunc: func(old, obj any) {
			// Relists repeat what the store holds: nothing changed.
			if o, ok := old.(*metav1.PartialObjectMetadata); ok && o.ResourceVersion == obj.(*metav1.PartialObjectMetadata).ResourceVersion {
				return
			}
			handle(obj)
		},
		DeleteFunc: handle,
	})
	w.informers[gvr] = inf
	klog.FromContext(w.ctx).V(1).Info("Watching applied objects", "resource", gvr.String())
	go inf.RunWithContext(w.ctx)
}

// current says whether the watch saw object ns/name of gvr at
// resourceVersion rv last: then it has not changed since.
func (w *watcher) current(gvr schema.GroupVersionResource, ns, name, rv string) bool {
	w.mu.Lock()
	inf := w.informers[gvr]
	w.mu.Unlock()
	if inf == nil || rv == "" || !inf.HasSynced() {
		return false
	}
	key := name
	if ns != "" {
		key = ns + "/" + name
	}
	obj, ok, err := inf.GetStore().GetByKey(key)
	return err == nil && ok && obj.(*metav1.PartialObjectMetadata).ResourceVersion == rv
}

// absent says whether the watch of gvr, synced, has no object ns/name
// with the agent's label: then the object most likely does not exist, and
// creating it at once saves a read. (One that exists without the label, or
// that the watch has not shown yet, makes the create fail with
// AlreadyExists, and the caller reads it then.)
func (w *watcher) absent(gvr schema.GroupVersionResource, ns, name string) bool {
	w.mu.Lock()
	inf := w.informers[gvr]
	w.mu.Unlock()
	if inf == nil || !inf.HasSynced() {
		return false
	}
	key := name
	if ns != "" {
		key = ns + "/" + name
	}
	_, ok, err := inf.GetStore().GetByKey(key)
	return err == nil && !ok
}

// hasApplied says whether the watch, synced, holds this agent's
// AppliedManifestWork name with uid.
func (w *watcher) hasApplied(name string, uid types.UID) bool {
	w.mu.Lock()
	inf := w.informers[appliedGVR]
	w.mu.Unlock()
	if inf == nil || !inf.HasSynced() {
		return false
	}
	obj, ok, err := inf.GetStore().GetByKey(name)
	return err == nil && ok && obj.(*metav1.PartialObjectMetadata).UID == uid
}

// enqueueOwners asks for a reconcile of each work of this hub that owns obj.
func (w *watcher) enqueueOwners(gvr schema.GroupVersionResource, obj any) {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return
	}
	var names []string
	if gvr == appliedGVR {
		names = append(names, m.Name)
	} else {
		for _, ref := range m.OwnerReferences {
			names = append(names, ref.Name)
		}
	}
	for _, n := range names {
		if work, ok := workName(w.hubHash, n); ok {
			w.queue.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: w.cluster, Name: work}})
		}
	}
}

// slimMetadata keeps of an object only what the watcher needs.
func slimMetadata(obj any) (any, error) {
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil
	}
	slim := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
		DeletionTimestamp: m.DeletionTimestamp,
	}}
	for _, ref := range m.OwnerReferences {
		if isAppliedOwner(ref) {
			slim.OwnerReferences = append(slim.OwnerReferences, ref)
		}
	}
	return slim, nil
}

// isAppliedOwner says whether ref names an AppliedManifestWork.
func isAppliedOwner(ref metav1.OwnerReference) bool {
	return ref.Kind == "AppliedManifestWork" && ref.APIVersion == workv1.GroupVersion.String()
}

// owned lists the objects that the watches saw owned by the
// AppliedManifestWork with uid, as AppliedManifestWork entries.
func (w *watcher) owned(uid types.UID) []workv1.AppliedManifestResourceMeta {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []workv1.AppliedManifestResourceMeta
	for gvr, inf := range w.informers {
		if gvr == appliedGVR {
			continue
		}
		for _, obj := range inf.GetStore().List() {
			m := obj.(*metav1.PartialObjectMetadata)
			for _, ref := range m.OwnerReferences {
				if ref.UID == uid {
					out = append(out, workv1.AppliedManifestResourceMeta{
						ResourceIdentifier: workv1.ResourceIdentifier{Group: gvr.Group, Resource: gvr.Resource, Namespace: m.Namespace, Name: m.Name},
						Version:            gvr.Version,
					})
				}
			}
		}
	}
	return out
}
