package services

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
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

// importer writes one cluster's imports: it follows the cluster's set
// and, for as long as the cluster is in a set, the set's ImportedServices.
type importer struct {
	cluster string
	sets    *clusterSet
	// spoke writes into the cluster; own is what it reads there.
	spoke client.WithWatch
	own   *ownObjects
	// changed says that the cluster's set changed.
	changed *latest

	mu sync.Mutex
	// route queues the import key of an own object of the set being
	// written that changed or went.
	route func(set, key string)
}

// newImporter returns the import side of the agent, which follows the
// set that sets follows.
func (a *Agent) newImporter(sets *clusterSet) (*importer, error) {
	spokeCfg := rest.CopyConfig(a.cfg.Spoke)
	spokeCfg.QPS, spokeCfg.Burst = importQPS, importBurst
	spoke, err := client.NewWithWatch(spokeCfg, client.Options{Scheme: spokeScheme, Mapper: a.cfg.SpokeMapper})
	if err != nil {
		return nil, fmt.Errorf("services import: create the client of cluster %s: %w", a.cfg.ClusterName, err)
	}
	im := &importer{cluster: a.cfg.ClusterName, sets: sets, spoke: spoke, changed: sets.subscribe()}
	im.own = newOwnObjects(spoke, func(set, key string) {
		im.mu.Lock()
		route := im.route
		im.mu.Unlock()
		if route != nil {
			route(set, key)
		}
	})
	return im, nil
}

// run follows the cluster's set until ctx ends: each change ends the
// imports of the set before (removing everything written for it) and
// starts those of the new.
func (im *importer) run(ctx context.Context) error {
	ctx = klog.NewContext(ctx, klog.FromContext(ctx).WithValues("side", "import"))
	logger := klog.FromContext(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { im.own.run(ctx) })
	if !im.own.waitForSync(ctx) || !im.sets.waitForSync(ctx) {
		return nil
	}
	var (
		current = im.sets.current()
		stop    context.CancelFunc
		done    chan struct{}
	)
	setName := func(sw *setWatch) string {
		if sw == nil {
			return ""
		}
		return sw.set
	}
	start := func(sw *setWatch) {
		sctx, cancel := context.WithCancel(ctx)
		stop, done = cancel, make(chan struct{})
		go func(done chan struct{}) {
			defer close(done)
			im.runSet(sctx, sw)
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
	logger.Info("Importing the services of the cluster's set", "clusterSet", setName(current))
	for {
		// What other sets left here goes first, so that a cluster never
		// holds the imports of two sets.
		if err := im.removeOtherSets(ctx, setName(current)); err != nil {
			d := backoff.Step()
			logger.Error(err, "Cannot remove the imports of the cluster's former sets; retrying", "clusterSet", setName(current), "retryIn", d.Round(time.Millisecond))
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(d):
				continue
			}
		}
		if current != nil && stop == nil {
			start(current)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-im.changed.changed():
		}
		if next := im.sets.current(); next != current {
			logger.Info("The cluster's set changed: removing the imports of the set before", "from", setName(current), "to", setName(next))
			end()
			current = next
		}
	}
}

// runSet writes the imports of sw's set until ctx ends: once the set's
// ImportedServices are listed, it compares every import in the cluster
// with them, removing those the hub no longer has, and then each that
// changes on the hub or in the cluster.
func (im *importer) runSet(ctx context.Context, sw *setWatch) {
	logger := klog.FromContext(ctx).WithValues("clusterSet", sw.set)
	ctx = klog.NewContext(ctx, logger)
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](50*time.Millisecond, time.Minute),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "services-import"})
	defer queue.ShutDown()
	enqueue := func(obj any) {
		if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if is, ok := obj.(*mcsv1alpha1.ImportedService); ok {
			queue.Add(is.Name)
		}
	}
	reg, err := sw.inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) }, DeleteFunc: enqueue,
	})
	if err != nil {
		logger.Error(err, "Cannot follow the cluster set's ImportedServices")
		return
	}
	defer func() { _ = sw.inf.RemoveEventHandler(reg) }()
	if !toolscache.WaitForCacheSync(ctx.Done(), sw.inf.HasSynced) {
		return
	}
	im.mu.Lock()
	im.route = func(set, key string) {
		if set == sw.set {
			queue.Add(key)
		}
	}
	im.mu.Unlock()
	defer func() {
		im.mu.Lock()
		im.route = nil
		im.mu.Unlock()
	}()
	r := &setReconciler{importer: im, set: sw.set, store: sw.inf.GetStore(), hubNamespace: sw.namespace}
	var wg sync.WaitGroup
	defer wg.Wait()
	for range importWorkers {
		wg.Go(func() {
			for r.next(ctx, queue) {
			}
		})
	}
	// Level-triggered: the imports this cluster holds for the set but the
	// hub no longer has are found here, at start and every resync.
	wait.UntilWithContext(ctx, func(context.Context) {
		for _, k := range r.localKeys() {
			queue.Add(k)
		}
	}, importResync)
	queue.ShutDown()
}
