package storetest

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
	"github.com/flotilla-io/flotilla/hub/search/store"
)

// The synthetic fleet: apps spread over every cluster, so that a label or
// image query over the whole fleet matches objects in many clusters.
const (
	apps       = 200
	teams      = 25
	namespaces = 20
	nodes      = 50
	batchSize  = 500
	writers    = 4
)

// ClusterName is the name of the i-th cluster Load writes.
func ClusterName(i int) string { return fmt.Sprintf("cluster-%04d", i) }

// FleetObject is the i-th object of cluster c of the synthetic fleet: 7 in
// 10 Pods (1 object in 100 a Pod in CrashLoopBackOff), Deployments, Services and
// ConfigMaps, in 20 namespaces, labelled with one of 200 apps and 25
// teams, with the app's image (and a sidecar's in 1 of 5).
func FleetObject(c, i int) searchv1alpha1.Object {
	app := (c*7 + i) % apps
	team := app % teams
	hash := fleetHash(c, i)
	o := searchv1alpha1.Object{
		Version:         "v1",
		Namespace:       fmt.Sprintf("ns-%02d", i%namespaces),
		UID:             types.UID(fmt.Sprintf("%08x-0000-4000-8000-%012x", c, i)),
		ResourceVersion: fmt.Sprint(1000 + i),
		Labels: map[string]string{
			"app":  fmt.Sprintf("app-%03d", app),
			"team": fmt.Sprintf("team-%02d", team),
			"env":  []string{"prod", "staging", "dev"}[c%3],
		},
	}
	image := fmt.Sprintf("registry.example.com/team-%02d/app-%03d:1.%d.%d", team, app, c%5, i%3)
	switch i % 10 {
	case 7:
		o.Group, o.Resource, o.Kind = "apps", "deployments", "Deployment"
		o.Name = fmt.Sprintf("app-%03d-%d", app, i)
		o.Images, o.Status = []string{image}, "Available"
		o.Fields = map[string]string{"spec.replicas": "3", "status.readyReplicas": "3"}
	case 8:
		o.Resource, o.Kind = "services", "Service"
		o.Name = fmt.Sprintf("app-%03d-%d", app, i)
		o.Fields = map[string]string{"spec.type": "ClusterIP"}
	case 9:
		o.Resource, o.Kind = "configmaps", "ConfigMap"
		o.Name = fmt.Sprintf("app-%03d-config-%d", app, i)
	default:
		o.Resource, o.Kind = "pods", "Pod"
		o.Name = fmt.Sprintf("app-%03d-%06x-%d", app, hash&0xffffff, i)
		o.Labels["pod-template-hash"] = fmt.Sprintf("%06x", hash>>40)
		o.Owner = &searchv1alpha1.Owner{Kind: "ReplicaSet", Name: fmt.Sprintf("app-%03d-%06x", app, hash>>40)}
		o.Images = []string{image}
		if i%5 == 0 {
			o.Images = append(o.Images, fmt.Sprintf("docker.io/envoyproxy/envoy:v1.3%d.0", c%4))
		}
		o.Status = "Running"
		switch {
		case i%100 == 3:
			o.Status = "CrashLoopBackOff"
		case i%50 == 1:
			o.Status = "Pending"
		}
		o.Conditions = map[string]string{"Ready": "True", "PodScheduled": "True"}
		o.Fields = map[string]string{
			"spec.nodeName": fmt.Sprintf("node-%02d", i%nodes),
			"status.podIP":  fmt.Sprintf("10.%d.%d.%d", c%256, i/256%256, i%256),
		}
	}
	return o
}

func fleetHash(c, i int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%d", c, i)
	return h.Sum64()
}

// LoadResult is what Load measured.
type LoadResult struct {
	Objects  int
	Duration time.Duration
}

// Rate is objects written per second.
func (r LoadResult) Rate() float64 { return float64(r.Objects) / r.Duration.Seconds() }

// Load writes the synthetic fleet into s: clusters × perCluster objects
// in batches of 500 (an agent's largest), four clusters at a time.
func Load(ctx context.Context, s store.Store, clusters, perCluster int) (LoadResult, error) {
	start := time.Now()
	var next atomic.Int64
	g, ctx := errgroup.WithContext(ctx)
	for range writers {
		g.Go(func() error {
			for {
				c := int(next.Add(1) - 1)
				if c >= clusters {
					return nil
				}
				batch := make([]searchv1alpha1.Object, 0, batchSize)
				for i := range perCluster {
					batch = append(batch, FleetObject(c, i))
					if len(batch) == batchSize || i == perCluster-1 {
						if err := s.Apply(ctx, ClusterName(c), batch, nil); err != nil {
							return fmt.Errorf("cluster %s: %w", ClusterName(c), err)
						}
						batch = batch[:0]
					}
				}
			}
		})
	}
	err := g.Wait()
	return LoadResult{Objects: clusters * perCluster, Duration: time.Since(start)}, err
}

// Latencies are one kind of query's times.
type Latencies struct {
	Name string
	// Matched is the mean number of items of the first pages.
	Matched float64
	Times   []time.Duration
}

// Quantile returns the q-quantile (0 < q ≤ 1) of the times.
func (l Latencies) Quantile(q float64) time.Duration {
	if len(l.Times) == 0 {
		return 0
	}
	sorted := slices.Clone(l.Times)
	slices.Sort(sorted)
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// Measurement is what Measure measured.
type Measurement struct {
	Queries []Latencies
	// Bytes is the database's size, if the store tells it; Objects how
	// many it holds.
	Bytes   int64
	Objects int64
}

// sizer is a store that tells its database's size.
type sizer interface {
	Size(ctx context.Context) (int64, error)
}

// Measure times n fleet-wide queries of each kind against a store that
// Load filled with clusters × perCluster objects: a label query (one app of
// 200), a name search (a Pod's hash, a handful of objects) and an image
// search (one app's image), which have targets and come first in
// Measurement.Queries, then a status query and a broad name search
// (n/10 of it). Each asks for the first page of store.DefaultLimit items.
func Measure(ctx context.Context, s store.Store, clusters, perCluster, n int) (Measurement, error) {
	rng := rand.New(rand.NewPCG(47, 47))
	pick := func() (int, int) { return rng.IntN(clusters), rng.IntN(perCluster/10) * 10 }
	kinds := []struct {
		name  string
		query func() store.Query
		// fewer divides n for a slow kind.
		fewer int
	}{
		{"label query (app=<one of 200>)", func() store.Query {
			r, _ := k8slabels.NewRequirement("app", selection.Equals, []string{fmt.Sprintf("app-%03d", rng.IntN(apps))})
			return store.Query{Labels: k8slabels.Requirements{*r}}
		}, 1},
		{"name search (part of a Pod's name)", func() store.Query {
			c, i := pick()
			return store.Query{NameContains: fmt.Sprintf("%06x-", fleetHash(c, i)&0xffffff)}
		}, 1},
		{"image search (one app's image)", func() store.Query {
			app := rng.IntN(apps)
			return store.Query{Images: []string{fmt.Sprintf("/app-%03d:", app)}}
		}, 1},
		// Two more for what they show, not for a target: a filter
		// without a selective index of its own, and a substring that
		// half the fleet's names contain (the worst case of a
		// substring index: every match is read and sorted).
		{"status query (CrashLoopBackOff, 1 %)", func() store.Query {
			return store.Query{Statuses: []string{"CrashLoopBackOff"}, Kinds: []string{"Pod"}}
		}, 1},
		{"name search, broad (half the names)", func() store.Query {
			return store.Query{NameContains: "app-1"}
		}, 10},
	}
	var m Measurement
	var mu sync.Mutex
	for _, kind := range kinds {
		l := Latencies{Name: kind.name}
		total := 0
		runs := max(1, n/kind.fewer)
		for range runs {
			q := kind.query()
			start := time.Now()
			page, err := s.Query(ctx, q)
			if err != nil {
				return m, fmt.Errorf("%s %+v: %w", kind.name, q, err)
			}
			l.Times = append(l.Times, time.Since(start))
			total += len(page.Items)
		}
		l.Matched = float64(total) / float64(runs)
		mu.Lock()
		m.Queries = append(m.Queries, l)
		mu.Unlock()
	}
	counts, err := s.Clusters(ctx)
	if err != nil {
		return m, err
	}
	for _, c := range counts {
		m.Objects += c
	}
	if sz, ok := s.(sizer); ok {
		if m.Bytes, err = sz.Size(ctx); err != nil {
			return m, err
		}
	}
	return m, nil
}

// Print writes a load's and a measurement's figures.
func Print(w io.Writer, name string, l LoadResult, m Measurement) {
	fmt.Fprintf(w, "search index (%s): %d objects\n", name, l.Objects)
	fmt.Fprintf(w, "  ingest: %.1f s, %.0f objects/s (batches of %d, %d clusters at a time)\n", l.Duration.Seconds(), l.Rate(), batchSize, writers)
	for _, q := range m.Queries {
		fmt.Fprintf(w, "  %-40s p50 %7.1f ms   p99 %7.1f ms   (%d queries, %.0f items on the first page)\n",
			q.Name, ms(q.Quantile(0.5)), ms(q.Quantile(0.99)), len(q.Times), q.Matched)
	}
	if m.Bytes > 0 && m.Objects > 0 {
		fmt.Fprintf(w, "  size: %.1f MiB, %.0f bytes per object\n", float64(m.Bytes)/(1<<20), float64(m.Bytes)/float64(m.Objects))
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
