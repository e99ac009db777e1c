package services

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/mcs"
)

// clusterSet follows the cluster's ManagedCluster on the hub and, while
// the cluster is in a set, the set's ImportedServices: one watch of each
// for the whole agent. The export side reads it for Ready (which
// generation of its exports the hub merged), the import side for what it
// writes into the cluster.
type clusterSet struct {
	cluster    string
	hub        client.WithWatch
	clusterInf toolscache.SharedIndexInformer
	// followed says that follow has seen the first list of the cluster.
	followed toolscache.InformerSynced

	mu  sync.Mutex
	cur *setWatch
	// subs are told each time the set changes; onImport is told the
	// service of each ImportedService that comes, changes or goes, and
	// ("", "") when the set changes.
	subs     []*latest
	onImport []func(namespace, name string)
}

// setWatch is the watch of one set's ImportedServices. Its informer stops
// when the cluster leaves the set.
type setWatch struct {
	set, namespace string
	inf            toolscache.SharedIndexInformer
	stop           context.CancelFunc
}

// importState is what the clusterSet knows of an ImportedService.
type importState int

const (
	// importNoSet: the cluster is in no cluster set.
	importNoSet importState = iota
	// importNotSynced: the set's ImportedServices cannot be read yet (the
	// hub grants that once the cluster is a member).
	importNotSynced
	// importMissing: the set has no ImportedService of the service.
	importMissing
	// importFound: the ImportedService is returned.
	importFound
)

func newClusterSet(cluster string, hub client.WithWatch) *clusterSet {
	c := &clusterSet{cluster: cluster, hub: hub}
	byName := fields.OneTermEqualSelector("metadata.name", cluster).String()
	lw := &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.FieldSelector = byName
			list := &clusterv1.ManagedClusterList{}
			return list, hub.List(ctx, list, &client.ListOptions{Raw: &opts})
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.FieldSelector = byName
			return hub.Watch(ctx, &clusterv1.ManagedClusterList{}, &client.ListOptions{Raw: &opts})
		},
	}
	c.clusterInf = toolscache.NewSharedIndexInformer(lw, &clusterv1.ManagedCluster{}, 0, toolscache.Indexers{})
	_ = c.clusterInf.SetTransform(cache.TransformStripManagedFields())
	return c
}

// start registers what follows the set; run runs it.
func (c *clusterSet) start(ctx context.Context) {
	follow := func() {
		set := ""
		if obj, ok, _ := c.clusterInf.GetStore().GetByKey(c.cluster); ok {
			set = obj.(*clusterv1.ManagedCluster).Labels[clusterv1.ClusterSetLabel]
		}
		c.follow(ctx, set)
	}
	reg, _ := c.clusterInf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { follow() },
		UpdateFunc: func(any, any) { follow() },
		DeleteFunc: func(any) { follow() },
	})
	c.mu.Lock()
	c.followed = reg.HasSynced
	c.mu.Unlock()
}

// subscribe returns what says that the set changed; call before run.
func (c *clusterSet) subscribe() *latest {
	l := newLatest()
	c.subs = append(c.subs, l)
	return l
}

// notifyImports registers fn to be told of every ImportedService of the
// current set that comes, changes or goes; call before run.
func (c *clusterSet) notifyImports(fn func(namespace, name string)) {
	c.onImport = append(c.onImport, fn)
}

// run follows the cluster's set until ctx ends.
func (c *clusterSet) run(ctx context.Context) {
	c.start(ctx)
	c.clusterInf.RunWithContext(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur != nil {
		c.cur.stop()
	}
}

// waitForSync waits until the cluster's ManagedCluster has been read and
// its set followed (not until the set's ImportedServices are listed: the
// hub may not allow that yet); false if ctx ended first.
func (c *clusterSet) waitForSync(ctx context.Context) bool {
	return toolscache.WaitForCacheSync(ctx.Done(), func() bool {
		c.mu.Lock()
		followed := c.followed
		c.mu.Unlock()
		return followed != nil && followed()
	})
}

// waitForImports waits until the current set's ImportedServices are
// listed, at most for d: a restarted agent then finds its exports merged
// rather than saying for a moment that it waits for them.
func (c *clusterSet) waitForImports(ctx context.Context, d time.Duration) {
	sw := c.current()
	if sw == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	toolscache.WaitForCacheSync(ctx.Done(), sw.inf.HasSynced)
}

// current returns the watch of the cluster's set, nil when in none.
func (c *clusterSet) current() *setWatch {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cur
}

// follow watches set's ImportedServices from now on ("" for none).
func (c *clusterSet) follow(ctx context.Context, set string) {
	c.mu.Lock()
	if c.cur != nil && c.cur.set == set || c.cur == nil && set == "" {
		c.mu.Unlock()
		return
	}
	if c.cur != nil {
		c.cur.stop()
		c.cur = nil
	}
	if set != "" {
		c.cur = c.watchSet(ctx, set)
	}
	c.mu.Unlock()
	// Told without the lock: what is told may read current.
	for _, l := range c.subs {
		l.notify()
	}
	for _, fn := range c.onImport {
		fn("", "")
	}
}

// watchSet starts the watch of set's ImportedServices.
func (c *clusterSet) watchSet(ctx context.Context, set string) *setWatch {
	ns := mcs.SetNamespace(set)
	logger := klog.FromContext(ctx).WithValues("clusterSet", set, "namespace", ns)
	var forbidden atomic.Bool
	// allowed says, once, that reads are allowed again: the informer may
	// list with a list or (streaming) with a watch.
	allowed := func(err error) {
		if err == nil && forbidden.Swap(false) {
			logger.Info("The hub now lets the cluster read its set's imported services")
		}
	}
	lw := &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			list := &mcsv1alpha1.ImportedServiceList{}
			err := c.hub.List(ctx, list, &client.ListOptions{Namespace: ns, Raw: &opts})
			allowed(err)
			return list, err
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			w, err := c.hub.Watch(ctx, &mcsv1alpha1.ImportedServiceList{}, &client.ListOptions{Namespace: ns, Raw: &opts})
			allowed(err)
			return w, err
		},
	}
	inf := toolscache.NewSharedIndexInformer(lw, &mcsv1alpha1.ImportedService{}, 0, toolscache.Indexers{})
	_ = inf.SetTransform(cache.TransformStripManagedFields())
	_ = inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *toolscache.Reflector, err error) {
		if apierrors.IsForbidden(err) {
			// The hub makes the RoleBinding once it counts the cluster a
			// member of an exclusive set; until then each retry is refused.
			if !forbidden.Swap(true) {
				logger.Info("The hub does not let the cluster read its set's imported services (yet); retrying with backoff. "+
					"The hub allows it once the cluster's set is an existing exclusive ManagedClusterSet", "reason", err.Error())
			}
			return
		}
		toolscache.DefaultWatchErrorHandler(ctx, r, err)
	})
	tell := func(obj any) {
		if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if is, ok := obj.(*mcsv1alpha1.ImportedService); ok {
			for _, fn := range c.onImport {
				fn(is.Spec.Namespace, is.Spec.Name)
			}
		}
	}
	_, _ = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: tell, UpdateFunc: func(_, obj any) { tell(obj) }, DeleteFunc: tell,
	})
	sctx, cancel := context.WithCancel(ctx)
	go func() {
		inf.RunWithContext(sctx)
	}()
	go func() {
		if toolscache.WaitForCacheSync(sctx.Done(), inf.HasSynced) {
			allowed(nil)
		}
	}()
	logger.V(1).Info("Following the cluster set's ImportedServices")
	return &setWatch{set: set, namespace: ns, inf: inf, stop: cancel}
}

// get returns the set and what is known of the ImportedService of
// Service namespace/name.
func (c *clusterSet) get(namespace, name string) (string, importState, *mcsv1alpha1.ImportedService) {
	sw := c.current()
	switch {
	case sw == nil:
		return "", importNoSet, nil
	case !sw.inf.HasSynced():
		return sw.set, importNotSynced, nil
	}
	obj, ok, _ := sw.inf.GetStore().GetByKey(sw.namespace + "/" + mcs.ObjectName(namespace, name))
	if !ok {
		return sw.set, importMissing, nil
	}
	return sw.set, importFound, obj.(*mcsv1alpha1.ImportedService)
}

// latest says that something changed, however many times since last read.
type latest struct{ ch chan struct{} }

func newLatest() *latest { return &latest{ch: make(chan struct{}, 1)} }

func (l *latest) notify() {
	select {
	case l.ch <- struct{}{}:
	default:
	}
}

func (l *latest) changed() <-chan struct{} { return l.ch }
