package search

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
)

// Batch limits: what the hub's ingest takes at most in one request.
const (
	MaxBatchObjects = 500
	MaxBatchBytes   = 1 << 20
)

// Config configures the collector of one managed cluster.
type Config struct {
	// ClusterName is the managed cluster's name on the hub.
	ClusterName string
	// Spoke reaches the managed cluster's API server.
	Spoke *rest.Config
	// BatchObjects caps the objects of one batch; 0 means MaxBatchObjects.
	BatchObjects int
}

// Agent indexes one managed cluster's objects in the hub's search index.
// Make one with New for the life of the process; Run it with each hub
// session.
type Agent struct {
	cfg      Config
	dynamic  dynamic.Interface
	metadata metadata.Interface
	// indexed counts the objects the running informers hold.
	indexed atomic.Int64
}

// New returns the collector of cfg's cluster.
func New(cfg Config) (*Agent, error) {
	if cfg.ClusterName == "" || cfg.Spoke == nil {
		return nil, errors.New("search agent: the cluster name and the spoke's configuration are required")
	}
	if cfg.BatchObjects <= 0 || cfg.BatchObjects > MaxBatchObjects {
		cfg.BatchObjects = MaxBatchObjects
	}
	spoke := rest.CopyConfig(cfg.Spoke)
	// Lists of thousands of objects per resource at the start.
	if spoke.QPS == 0 {
		spoke.QPS, spoke.Burst = 50, 100
	}
	d, err := dynamic.NewForConfig(spoke)
	if err != nil {
		return nil, fmt.Errorf("search agent: %w", err)
	}
	m, err := metadata.NewForConfig(spoke)
	if err != nil {
		return nil, fmt.Errorf("search agent: %w", err)
	}
	return &Agent{cfg: cfg, dynamic: d, metadata: m}, nil
}

// Indexed is how many objects of its cluster the agent holds, and so has
// sent or is sending to the hub.
func (a *Agent) Indexed() int64 { return a.indexed.Load() }

// Run indexes the cluster over one hub session until ctx ends.
func (a *Agent) Run(ctx context.Context, hub *rest.Config) error {
	httpClient, err := rest.HTTPClientFor(hub)
	if err != nil {
		return fmt.Errorf("search agent: the hub's client: %w", err)
	}
	hc := &hubClient{host: hub.Host, cluster: a.cfg.ClusterName, http: httpClient}
	configs, err := newConfigWatch(hub)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c := &collector{agent: a, hub: hc, pending: newPending(), running: map[string]*resourceInformer{}}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.send(ctx)
	}()
	err = configs.run(ctx, c.configure)
	cancel()
	c.stopAll()
	wg.Wait()
	return err
}

// collector runs one hub session's informers and sender.
type collector struct {
	agent   *Agent
	hub     *hubClient
	pending *pending
	mu      sync.Mutex
	// running are the informers by resourceKey.
	running map[string]*resourceInformer
	seq     int64
}

// resourceKey names a resource apart from how it is read.
func resourceKey(r searchv1alpha1.SearchResource) string { return r.Group + "/" + r.Resource }

// configure starts the informers of the resources that want lists and
// stops the others; the hub's rows of a resource no longer indexed are
// deleted.
func (c *collector) configure(ctx context.Context, want []searchv1alpha1.SearchResource) {
	c.mu.Lock()
	defer c.mu.Unlock()
	wanted := map[string]searchv1alpha1.SearchResource{}
	for _, r := range want {
		r = normalize(r)
		wanted[resourceKey(r)] = r
	}
	for key, ri := range c.running {
		r, ok := wanted[key]
		if ok && r == ri.resource {
			continue
		}
		ri.stop()
		delete(c.running, key)
		if !ok {
			go c.forget(ctx, ri.resource)
		}
	}
	for key, r := range wanted {
		if _, ok := c.running[key]; !ok {
			c.running[key] = c.start(ctx, r)
		}
	}
}

// normalize makes Secrets and ConfigMaps metadata-only whatever the
// config says.
func normalize(r searchv1alpha1.SearchResource) searchv1alpha1.SearchResource {
	if r.Group == "" && (r.Resource == "secrets" || r.Resource == "configmaps") {
		r.MetadataOnly = true
	}
	return r
}

func (c *collector) stopAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, ri := range c.running {
		ri.stop()
		delete(c.running, key)
	}
}

// forget deletes the hub's rows of a resource no longer indexed.
func (c *collector) forget(ctx context.Context, r searchv1alpha1.SearchResource) {
	gr := groupResource(r)
	err := retry(ctx, func() error {
		versions, err := c.hub.versions(ctx, gr)
		if err != nil {
			return err
		}
		for uid := range versions {
			c.pending.delete(searchv1alpha1.ObjectRef{Group: r.Group, Resource: r.Resource, UID: uid})
		}
		return nil
	})
	if err != nil && ctx.Err() == nil {
		klog.FromContext(ctx).Error(err, "Cannot remove a resource no longer indexed from the hub's index", "resource", gr.String())
	}
}

// send posts the pending changes one batch at a time until ctx ends,
// keeping a batch the hub could not take and trying again after a
// backoff.
func (c *collector) send(ctx context.Context) {
	logger := klog.FromContext(ctx)
	backoff := newBackoff()
	for {
		if c.pending.len() == 0 {
			select {
			case <-ctx.Done():
				return
			case <-c.pending.wake:
				continue
			}
		}
		b, gens := c.pending.take(c.agent.cfg.BatchObjects, MaxBatchBytes)
		c.seq++
		b.Seq = c.seq
		err := c.hub.send(ctx, &b)
		if err == nil {
			c.pending.done(gens)
			backoff = newBackoff()
			continue
		}
		if ctx.Err() != nil {
			return
		}
		d := backoff.Step()
		if busy, ok := isBusy(err); ok && busy.retryAfter > d {
			d = busy.retryAfter
		}
		logger.V(1).Info("The hub did not take a search batch; sending it again", "reason", err.Error(), "retryIn", d.Round(time.Millisecond), "pending", c.pending.len())
		select {
		case <-ctx.Done():
			return
		case <-time.After(d):
		}
	}
}

func newBackoff() wait.Backoff {
	return wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.2, Steps: math.MaxInt32, Cap: 30 * time.Second}
}

// retry runs f until it succeeds or ctx ends, with a backoff.
func retry(ctx context.Context, f func() error) error {
	backoff := newBackoff()
	for {
		err := f()
		if err == nil || ctx.Err() != nil {
			return err
		}
		d := backoff.Step()
		if busy, ok := isBusy(err); ok && busy.retryAfter > d {
			d = busy.retryAfter
		}
		klog.FromContext(ctx).V(1).Info("Search: retrying", "reason", err.Error(), "retryIn", d.Round(time.Millisecond))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
		}
	}
}
