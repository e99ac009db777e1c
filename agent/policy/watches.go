package policy

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/flotilla-io/flotilla/agent/policy/engine"
)

// crdGVR is watched while a template names a kind the spoke does not
// serve, so that the template is evaluated again once its CRD arrives.
var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// watchKey is one watch on the spoke: one object (name set), or the
// objects of a resource in a namespace ("" for all) that a label selector
// selects.
type watchKey struct {
	gvr       schema.GroupVersionResource
	namespace string
	name      string
	selector  string
	// metaOnly keeps only metadata in the store: for watches whose
	// events matter, not their objects.
	metaOnly bool
}

func (k watchKey) String() string {
	s := k.gvr.String() + " " + k.namespace + "/" + k.name
	if k.selector != "" {
		s += " [" + k.selector + "]"
	}
	return s
}

// watchEntry is a running informer and the templates that read through it.
type watchEntry struct {
	inf    toolscache.SharedIndexInformer
	cancel context.CancelFunc
	users  map[string]bool
	// err is the last error of listing or watching, until the store syncs.
	err atomic.Pointer[error]
}

// syncTimeout bounds the wait for a new watch's first list.
const syncTimeout = 30 * time.Second

// wait waits until the entry's store holds what the API server has, and
// fails early when listing fails (a kind the agent may not read).
func (e *watchEntry) wait(ctx context.Context, key watchKey) error {
	ctx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !e.inf.HasSynced() {
		if err := e.err.Load(); err != nil {
			return fmt.Errorf("cannot watch %s: %w", key.gvr.Resource, *err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("watch of %s did not sync: %w", key.gvr.Resource, ctx.Err())
		case <-tick.C:
		}
	}
	return nil
}

// registry runs the spoke watches that the policies' evaluations need:
// one informer per object or list a template read, started when first
// read and stopped when no template reads it any longer. Every event
// asks for a reconcile of the policies whose templates read the object,
// so that evaluation is driven by change, never by polling. Its stores
// are also what the evaluations read.
type registry struct {
	client  dynamic.Interface
	cluster string

	mu      sync.Mutex
	ctx     context.Context
	queue   workqueue.TypedRateLimitingInterface[reconcile.Request]
	entries map[watchKey]*watchEntry
	byUser  map[string]map[watchKey]bool
}

func newRegistry(client dynamic.Interface, cluster string) *registry {
	return &registry{client: client, cluster: cluster, entries: map[watchKey]*watchEntry{}, byUser: map[string]map[watchKey]bool{}}
}

// Start is the controller's source of spoke events: it keeps the queue.
func (r *registry) Start(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ctx, r.queue = ctx, q
	return nil
}

// user names the reader of a watch: a template of a policy.
func user(policy, template string) string { return policy + "/" + template }

// policyOf is the policy of a user.
func policyOf(user string) string {
	p, _, _ := strings.Cut(user, "/")
	return p
}

// ensure makes sure key is watched for u and returns its informer, once
// its store holds what the API server has.
func (r *registry) ensure(ctx context.Context, key watchKey, u string) (toolscache.SharedIndexInformer, error) {
	e, err := r.add(key, u)
	if err != nil {
		return nil, err
	}
	if err := e.wait(ctx, key); err != nil {
		return nil, err
	}
	return e.inf, nil
}

// add watches key for u, without waiting for the watch to sync.
func (r *registry) add(key watchKey, u string) (*watchEntry, error) {
	r.mu.Lock()
	if r.ctx == nil {
		r.mu.Unlock()
		return nil, fmt.Errorf("the policy agent's watches are not started")
	}
	e := r.entries[key]
	if e == nil {
		e = r.start(key)
		r.entries[key] = e
	}
	e.users[u] = true
	if r.byUser[u] == nil {
		r.byUser[u] = map[watchKey]bool{}
	}
	r.byUser[u][key] = true
	r.mu.Unlock()
	return e, nil
}

// start starts the informer of key; r.mu is held.
func (r *registry) start(key watchKey) *watchEntry {
	tweak := func(o *metav1.ListOptions) {
		if key.name != "" {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", key.name).String()
		}
		o.LabelSelector = key.selector
	}
	inf := dynamicinformer.NewFilteredDynamicInformer(r.client, key.gvr, key.namespace, 0, toolscache.Indexers{}, tweak).Informer()
	_ = inf.SetTransform(slim(key.metaOnly))
	e := &watchEntry{inf: inf, users: map[string]bool{}}
	_ = inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, rf *toolscache.Reflector, err error) {
		e.err.Store(&err)
		toolscache.DefaultWatchErrorHandler(ctx, rf, err)
	})
	handle := func(obj any) { r.notify(key) }
	_, _ = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: handle,
		UpdateFunc: func(old, obj any) {
			// Relists repeat what the store holds: nothing changed.
			o, ok1 := old.(*unstructured.Unstructured)
			n, ok2 := obj.(*unstructured.Unstructured)
			if ok1 && ok2 && o.GetResourceVersion() == n.GetResourceVersion() {
				return
			}
			handle(obj)
		},
		DeleteFunc: handle,
	})
	ctx, cancel := context.WithCancel(r.ctx)
	e.cancel = cancel
	klog.FromContext(r.ctx).V(1).Info("Watching for policies", "watch", key.String())
	go inf.RunWithContext(ctx)
	return e
}

// notify asks for a reconcile of every policy that reads key.
func (r *registry) notify(key watchKey) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.entries[key]
	if e == nil || r.queue == nil {
		return
	}
	for u := range e.users {
		r.queue.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: r.cluster, Name: policyOf(u)}})
	}
}

// track records that u read exactly keys in its last evaluation: the
// watches it no longer reads are released, and stopped when nobody reads
// them. track(u, nil) releases all of u's watches.
func (r *registry) track(u string, keys map[watchKey]bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for key := range r.byUser[u] {
		if keys[key] {
			continue
		}
		delete(r.byUser[u], key)
		if e := r.entries[key]; e != nil {
			delete(e.users, u)
			if len(e.users) == 0 {
				e.cancel()
				delete(r.entries, key)
				klog.FromContext(r.ctx).V(1).Info("Stopped watching for policies", "watch", key.String())
			}
		}
	}
	if len(r.byUser[u]) == 0 {
		delete(r.byUser, u)
	}
}

// releaseAll releases the watches of every template of policy.
func (r *registry) releaseAll(policy string) {
	r.mu.Lock()
	var users []string
	for u := range r.byUser {
		if policyOf(u) == policy {
			users = append(users, u)
		}
	}
	r.mu.Unlock()
	for _, u := range users {
		r.track(u, nil)
	}
}

// watched lists the watches in use, for tests and debugging.
func (r *registry) watched() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for k := range r.entries {
		out = append(out, k.String())
	}
	sort.Strings(out)
	return out
}

// slim drops what evaluation never needs from watched objects.
func slim(metaOnly bool) toolscache.TransformFunc {
	return func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil
		}
		if metaOnly {
			m := &unstructured.Unstructured{Object: map[string]any{"apiVersion": u.GetAPIVersion(), "kind": u.GetKind()}}
			m.SetName(u.GetName())
			m.SetNamespace(u.GetNamespace())
			m.SetResourceVersion(u.GetResourceVersion())
			return m, nil
		}
		u.SetManagedFields(nil)
		return u, nil
	}
}

// watchReader reads for one template through the registry, recording
// what it read.
type watchReader struct {
	reg    *registry
	mapper meta.RESTMapper
	user   string
	used   map[watchKey]bool
}

var _ engine.Reader = &watchReader{}

func (r *registry) reader(mapper meta.RESTMapper, u string) *watchReader {
	return &watchReader{reg: r, mapper: mapper, user: u, used: map[watchKey]bool{}}
}

// Mapping resolves gvk; a kind the spoke does not serve makes the
// template watch CRDs, to be evaluated again when one arrives.
func (w *watchReader) Mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	m, err := w.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil && meta.IsNoMatchError(err) {
		key := watchKey{gvr: crdGVR, metaOnly: true}
		w.used[key] = true
		// The CRDs' events matter, not their store: no need to wait.
		_, _ = w.reg.add(key, w.user)
	}
	return m, err
}

// Get reads one object from its watch.
func (w *watchReader) Get(ctx context.Context, m *meta.RESTMapping, namespace, name string) (*unstructured.Unstructured, error) {
	key := watchKey{gvr: m.Resource, namespace: namespace, name: name}
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		key.namespace = ""
	}
	w.used[key] = true
	inf, err := w.reg.ensure(ctx, key, w.user)
	if err != nil {
		return nil, err
	}
	storeKey := name
	if key.namespace != "" {
		storeKey = key.namespace + "/" + name
	}
	obj, ok, err := inf.GetStore().GetByKey(storeKey)
	if err != nil || !ok {
		return nil, err
	}
	return obj.(*unstructured.Unstructured), nil
}

// List reads objects from the watch of their namespace and selector.
func (w *watchReader) List(ctx context.Context, m *meta.RESTMapping, namespace string, selector labels.Selector) ([]*unstructured.Unstructured, error) {
	key := watchKey{gvr: m.Resource, namespace: namespace}
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		key.namespace = ""
	}
	if selector != nil && !selector.Empty() {
		key.selector = selector.String()
	}
	w.used[key] = true
	inf, err := w.reg.ensure(ctx, key, w.user)
	if err != nil {
		return nil, err
	}
	items := inf.GetStore().List()
	out := make([]*unstructured.Unstructured, 0, len(items))
	for _, it := range items {
		out = append(out, it.(*unstructured.Unstructured))
	}
	return out, nil
}
