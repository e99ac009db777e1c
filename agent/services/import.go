package services

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/mcs"
)

const (
	// importWorkers is how many imported services are written at once.
	importWorkers = 4
	// importResync is how often every import is compared with the
	// cluster again, which repairs what someone else changed there.
	importResync = 10 * time.Minute
	// importQPS and importBurst bound the import side's requests to the
	// cluster: client-go's default (5 a second) made the first import of
	// 1,000 services take 14 minutes, four requests each (docs/benchmarks.md).
	importQPS, importBurst = 200, 400
)

// importScheme holds what the import side reads and writes, on the hub
// and in the cluster.
var importScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(corev1.AddToScheme(s))
	utilruntime.Must(discoveryv1.AddToScheme(s))
	utilruntime.Must(clusterv1.AddToScheme(s))
	utilruntime.Must(mcsv1alpha1.AddToScheme(s))
	utilruntime.Must(mcsv1beta1.AddToScheme(s))
	return s
}()

// importer writes one cluster's imports: it follows the cluster's set on
// the hub and, for as long as the cluster is in a set, the set's
// ImportedServices.
type importer struct {
	cluster string
	hub     client.WithWatch
	spoke   client.Client
	// spokeWatch watches what the agent wrote into the cluster.
	spokeWatch client.WithWatch
}

// runImport writes the cluster's imports into it until ctx ends.
func (a *Agent) runImport(ctx context.Context, hub *rest.Config) error {
	hubClient, err := client.NewWithWatch(hub, client.Options{Scheme: importScheme})
	if err != nil {
		return fmt.Errorf("services import: create the hub client: %w", err)
	}
	spokeCfg := rest.CopyConfig(a.cfg.Spoke)
	spokeCfg.QPS, spokeCfg.Burst = importQPS, importBurst
	spoke, err := client.NewWithWatch(spokeCfg, client.Options{Scheme: importScheme, Mapper: a.cfg.SpokeMapper})
	if err != nil {
		return fmt.Errorf("services import: create the client of cluster %s: %w", a.cfg.ClusterName, err)
	}
	im := &importer{cluster: a.cfg.ClusterName, hub: hubClient, spoke: spoke, spokeWatch: spoke}
	return im.run(klog.NewContext(ctx, klog.FromContext(ctx).WithValues("side", "import")))
}

// run follows the cluster's set: each change ends the imports of the set
// before (removing everything written for it) and starts those of the new.
func (im *importer) run(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	sets := newLatest()
	inf := im.clusterInformer(sets)
	go inf.RunWithContext(ctx)
	if !toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return nil
	}
	setOf := func() string {
		obj, ok, _ := inf.GetStore().GetByKey(im.cluster)
		if !ok {
			return ""
		}
		return obj.(*clusterv1.ManagedCluster).Labels[clusterv1.ClusterSetLabel]
	}
	var (
		current = setOf()
		stop    context.CancelFunc
		done    chan struct{}
	)
	start := func(set string) {
		sctx, cancel := context.WithCancel(ctx)
		stop, done = cancel, make(chan struct{})
		go func(done chan struct{}) {
			defer close(done)
			im.runSet(sctx, set)
		}(done)
	}
	end := func() {
		if stop != nil {
			stop()
			<-done
			stop = nil
		}
	}
	defer end()
	backoff := wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.1, Steps: 1 << 30, Cap: time.Minute}
	logger.Info("Importing the services of the cluster's set", "clusterSet", current)
	for {
		// What other sets left here goes first, so that a cluster never
		// holds the imports of two sets.
		if err := im.removeOtherSets(ctx, current); err != nil {
			d := backoff.Step()
			logger.Error(err, "Cannot remove the imports of the cluster's former sets; retrying", "clusterSet", current, "retryIn", d.Round(time.Millisecond))
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(d):
				continue
			}
		}
		if current != "" && stop == nil {
			start(current)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-sets.changed():
		}
		if next := setOf(); next != current {
			logger.Info("The cluster's set changed: removing the imports of the set before", "from", current, "to", next)
			end()
			current = next
		}
	}
}

// clusterInformer watches the cluster's own ManagedCluster, by name, and
// says on changed when it changed.
func (im *importer) clusterInformer(changed *latest) toolscache.SharedIndexInformer {
	byName := fields.OneTermEqualSelector("metadata.name", im.cluster).String()
	lw := &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.FieldSelector = byName
			list := &clusterv1.ManagedClusterList{}
			return list, im.hub.List(ctx, list, &client.ListOptions{Raw: &opts})
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.FieldSelector = byName
			return im.hub.Watch(ctx, &clusterv1.ManagedClusterList{}, &client.ListOptions{Raw: &opts})
		},
	}
	inf := toolscache.NewSharedIndexInformer(lw, &clusterv1.ManagedCluster{}, 0, toolscache.Indexers{})
	_ = inf.SetTransform(cache.TransformStripManagedFields())
	_, _ = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { changed.notify() },
		UpdateFunc: func(any, any) { changed.notify() },
		DeleteFunc: func(any) { changed.notify() },
	})
	return inf
}

// runSet writes the imports of set until ctx ends: it watches the set's
// ImportedServices on the hub and, once it has listed them, compares
// every import in the cluster with them, removing those the hub no longer
// has.
func (im *importer) runSet(ctx context.Context, set string) {
	logger := klog.FromContext(ctx).WithValues("clusterSet", set)
	ctx = klog.NewContext(ctx, logger)
	ns := mcs.SetNamespace(set)
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "services-import"})
	defer queue.ShutDown()
	var forbidden atomic.Bool
	// allowed says, once, that reads are allowed again: the informer may
	// list with a list or (streaming) with a watch.
	allowed := func(err error) {
		if err == nil && forbidden.Swap(false) {
			logger.Info("The hub now lets the cluster read its set's imported services", "namespace", ns)
		}
	}
	lw := &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			list := &mcsv1alpha1.ImportedServiceList{}
			err := im.hub.List(ctx, list, &client.ListOptions{Namespace: ns, Raw: &opts})
			allowed(err)
			return list, err
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			w, err := im.hub.Watch(ctx, &mcsv1alpha1.ImportedServiceList{}, &client.ListOptions{Namespace: ns, Raw: &opts})
			allowed(err)
			return w, err
		},
	}
	inf := toolscache.NewSharedIndexInformer(lw, &mcsv1alpha1.ImportedService{}, importResync, toolscache.Indexers{})
	_ = inf.SetTransform(cache.TransformStripManagedFields())
	_ = inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *toolscache.Reflector, err error) {
		if apierrors.IsForbidden(err) {
			// The hub makes the RoleBinding once it counts the cluster a
			// member of an exclusive set; until then each retry is refused.
			if !forbidden.Swap(true) {
				logger.Info("The hub does not let the cluster read its set's imported services (yet); retrying with backoff. "+
					"The hub allows it once the cluster's set is an existing exclusive ManagedClusterSet",
					"namespace", ns, "reason", err.Error())
			}
			return
		}
		toolscache.DefaultWatchErrorHandler(ctx, r, err)
	})
	enqueue := func(obj any) {
		if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if is, ok := obj.(*mcsv1alpha1.ImportedService); ok {
			queue.Add(is.Name)
		}
	}
	_, _ = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) }, DeleteFunc: enqueue,
	})
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { inf.RunWithContext(ctx) })
	if !toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return
	}
	allowed(nil)
	r := &setReconciler{importer: im, set: set, store: inf.GetStore(), hubNamespace: ns}
	for range importWorkers {
		wg.Go(func() {
			for r.next(ctx, queue) {
			}
		})
	}
	wg.Go(func() { im.watchOwn(ctx, set, func(key string) { queue.Add(key) }) })
	// Level-triggered: the imports this cluster holds for the set but the
	// hub no longer has are found here, at start and every resync.
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		keys, err := r.localKeys(ctx)
		if err != nil {
			logger.Error(err, "Cannot list the cluster's imports of the set; retrying at the next resync")
			return
		}
		for _, k := range keys {
			queue.Add(k)
		}
	}, importResync)
	queue.ShutDown()
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
