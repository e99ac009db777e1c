package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
	"github.com/flotilla-io/flotilla/hub"
	hubsearch "github.com/flotilla-io/flotilla/hub/search"
	"github.com/flotilla-io/flotilla/internal/search"
	"github.com/flotilla-io/flotilla/test/framework/postgres"
)

var (
	searchClusters = flag.Int("search-clusters", 1000, "search: hollow clusters, each streaming its objects through the hub's real ingest endpoint")
	searchObjects  = flag.Int("search-objects", 1000, "search: objects per cluster")
	searchStores   = flag.String("search-stores", "sqlite,postgres", "search: the indexes measured, one hub after the other: sqlite (embedded), postgres (a real PostgreSQL server started on 127.0.0.1)")
	searchQueries  = flag.Int("search-queries", 200, "search: queries timed of each kind (label, name, image), over the whole fleet")
	searchChanges  = flag.Int("search-changes", 200, "search: object changes timed from the agent's post to the query that finds them")
	searchSenders  = flag.Int("search-senders", 32, "search: clusters sending at once during the initial indexing (each one batch at a time, as an agent does; the hub answers 429 past its in-flight bound)")
)

// searchBatch is the agent's batch size (agent/search.MaxBatchObjects).
const searchBatch = 500

// benchSearch runs the search benchmark (docs/benchmarks.md, "Search"):
// for each store, a hub whose hollow clusters stream their objects into
// its index through the real ingest endpoint, then queries over the whole
// fleet through the real query endpoint.
func benchSearch(ctx context.Context, e *env) error {
	quietKlog()
	for s := range strings.SplitSeq(*searchStores, ",") {
		if s != "sqlite" && s != "postgres" {
			return fmt.Errorf("-search-stores %q: want sqlite, postgres or both", *searchStores)
		}
	}
	if err := benchSearchAgentMemory(ctx, e); err != nil {
		return err
	}
	for s := range strings.SplitSeq(*searchStores, ",") {
		fmt.Printf("\n  %s, %d clusters × %d objects\n", s, *searchClusters, *searchObjects)
		if err := benchSearchStore(ctx, e, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

// searchFleet is one store's run.
type searchFleet struct {
	hub     *hubUnderTest
	admin   *rest.Config
	http    *http.Client
	agents  sync.Map // cluster name → *hollowAgent
	joined  atomic.Int64
	indexed atomic.Int64
	refused atomic.Int64
	// dsn is the PostgreSQL database's, if the index is there.
	dsn string
}

func benchSearchStore(ctx context.Context, e *env, kind string) error {
	var cl cleanups
	defer cl.run()
	dir := filepath.Join(e.workDir, "search-"+kind)
	args := hubArgs()
	f := &searchFleet{}
	if kind == "postgres" {
		pg, err := postgres.Start(ctx)
		if errors.Is(err, postgres.ErrNotInstalled) {
			row("PostgreSQL", "not installed: skipped", "")
			return nil
		}
		if err != nil {
			return err
		}
		cl.add(func() { _ = pg.Close() })
		dsn, err := pg.CreateDatabase(ctx, "search")
		if err != nil {
			return err
		}
		args = append(args, "--search-database", dsn)
		f.dsn = dsn
	}
	p, err := startHubUnderTestArgs(ctx, e, dir, args)
	if err != nil {
		return err
	}
	f.hub = p
	cl.add(p.Stop)
	join, err := initHub(ctx, p.HubProcess)
	if err != nil {
		return err
	}
	bootstrap, err := bootstrapKubeconfig(p.Kubeconfig, join.URL, join.Token, filepath.Join(e.workDir, "search-"+kind+"-bootstrap.kubeconfig"))
	if err != nil {
		return err
	}
	if f.admin, err = clientcmd.BuildConfigFromFlags("", p.Kubeconfig); err != nil {
		return err
	}
	f.admin.QPS, f.admin.Burst = 500, 1000
	if f.http, err = rest.HTTPClientFor(f.admin); err != nil {
		return err
	}
	c, err := client.New(f.admin, client.Options{Scheme: hub.Scheme()})
	if err != nil {
		return err
	}
	names := clusterNames("search", *searchClusters)
	stop, err := startHollowAgentsWith(ctx, names, bootstrap, f.admin, hollowHooks{joined: func(_ context.Context, a *hollowAgent) {
		f.agents.Store(a.name, a)
		f.joined.Add(1)
	}})
	if err != nil {
		return err
	}
	cl.add(stop)
	started := time.Now()
	if _, err := acceptAll(ctx, p.HubProcess, c, names); err != nil {
		return err
	}
	for f.joined.Load() < int64(len(names)) {
		if err := pause(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
	row(fmt.Sprintf("%d clusters joined and accepted", len(names)), seconds(time.Since(started)), "")
	rssBefore, err := p.rss()
	if err != nil {
		return err
	}
	if err := f.indexAll(ctx, names); err != nil {
		return err
	}
	if err := f.queries(ctx); err != nil {
		return err
	}
	if err := f.changes(ctx, names); err != nil {
		return err
	}
	rss, err := p.rss()
	if err != nil {
		return err
	}
	row("hub RSS before indexing / after the queries", mib(rssBefore)+" / "+mib(rss), "")
	size, err := f.indexBytes(ctx, kind, dir)
	if err != nil {
		return err
	}
	total := int64(len(names) * *searchObjects)
	row("index size on disk", mib(size), "")
	row("bytes per indexed object (on disk)", fmt.Sprintf("%d B", size/total), "")
	return nil
}

// searchObject is object i of cluster c: a mix of Pods, Deployments,
// Services, ConfigMaps and Secrets in ten namespaces, with fifty apps
// (label app), twenty teams' images and one Pod in a hundred in
// CrashLoopBackOff.
func searchObject(c string, i, version int) searchv1alpha1.Object {
	app := fmt.Sprintf("app-%d", i%50)
	o := searchv1alpha1.Object{
		Namespace: fmt.Sprintf("ns-%d", i%10), Name: fmt.Sprintf("%s-%d", app, i),
		UID: types.UID(fmt.Sprintf("%s-%d", c, i)), ResourceVersion: fmt.Sprint(version),
		CreationTimestamp: metav1.NewTime(time.Unix(1_700_000_000, 0)),
		Labels:            map[string]string{"app": app, "tier": []string{"front", "back", "data"}[i%3]},
	}
	image := fmt.Sprintf("registry.example/team-%d/%s:v%d", i%20, app, 1+i%3)
	switch {
	case i%10 < 6:
		o.Version, o.Resource, o.Kind = "v1", "pods", "Pod"
		o.Images, o.Status = []string{image}, "Running"
		if i%100 == 3 {
			o.Status = "CrashLoopBackOff"
		}
		o.Owner = &searchv1alpha1.Owner{Kind: "ReplicaSet", Name: app + "-5d9c8", UID: types.UID(c + "-rs-" + app)}
		o.Conditions = map[string]string{"Ready": "True", "PodScheduled": "True"}
		o.Fields = map[string]string{"spec.nodeName": fmt.Sprintf("node-%d", i%5), "status.podIP": fmt.Sprintf("10.0.%d.%d", i/250, i%250)}
	case i%10 == 6:
		o.Group, o.Version, o.Resource, o.Kind = "apps", "v1", "deployments", "Deployment"
		o.Images, o.Status = []string{image}, "Available"
		o.Conditions = map[string]string{"Available": "True", "Progressing": "True"}
		o.Fields = map[string]string{"spec.replicas": "3", "status.readyReplicas": "3"}
	case i%10 == 7:
		o.Version, o.Resource, o.Kind = "v1", "services", "Service"
		o.Fields = map[string]string{"spec.type": "ClusterIP", "spec.clusterIP": fmt.Sprintf("10.96.%d.%d", i/250, i%250)}
	case i%10 == 8:
		o.Version, o.Resource, o.Kind = "v1", "configmaps", "ConfigMap"
	default:
		o.Version, o.Resource, o.Kind = "v1", "secrets", "Secret"
	}
	return o
}

// post sends one ChangeBatch as cluster c's agent, again while the hub
// answers 429 or 503, as the agent does.
func (f *searchFleet) post(ctx context.Context, a *hollowAgent, b *searchv1alpha1.ChangeBatch) error {
	body, err := json.Marshal(b)
	if err != nil {
		return err
	}
	for n := 0; ; n++ {
		err := a.hub.do(ctx, http.MethodPost, search.ChangesPath(a.name), nil, "application/json", body, nil)
		if err == nil {
			return nil
		}
		if !apierrors.IsTooManyRequests(err) && !apierrors.IsServiceUnavailable(err) {
			return fmt.Errorf("cluster %s: %w", a.name, err)
		}
		f.refused.Add(1)
		if !retry(ctx, n) {
			return ctx.Err()
		}
	}
}

// indexAll streams every cluster's objects, -search-senders clusters at
// once, each one batch at a time.
func (f *searchFleet) indexAll(ctx context.Context, names []string) error {
	started := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(*searchSenders)
	for _, n := range names {
		v, _ := f.agents.Load(n)
		a := v.(*hollowAgent)
		g.Go(func() error {
			for from, seq := 0, int64(1); from < *searchObjects; from, seq = from+searchBatch, seq+1 {
				b := &searchv1alpha1.ChangeBatch{Seq: seq}
				for i := from; i < min(from+searchBatch, *searchObjects); i++ {
					b.Upserts = append(b.Upserts, searchObject(n, i, 1))
				}
				if err := f.post(gctx, a, b); err != nil {
					return err
				}
				f.indexed.Add(int64(len(b.Upserts)))
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	took := time.Since(started)
	row("every cluster indexed (last batch acknowledged)", seconds(took), "")
	row("ingest rate", fmt.Sprintf("%.0f objects/s", float64(f.indexed.Load())/took.Seconds()), "")
	row("batches refused with 429/503 and sent again", fmt.Sprint(f.refused.Load()), "")
	// Acknowledged is committed: the index holds every object.
	var res searchv1alpha1.SearchResult
	if err := f.query(ctx, "kind=Secret", 1, &res); err != nil {
		return err
	}
	return nil
}

// query asks the hub's query endpoint as its admin.
func (f *searchFleet) query(ctx context.Context, q string, limit int, into *searchv1alpha1.SearchResult) error {
	u := f.admin.Host + search.SearchPath + "?" + url.Values{"q": {q}, "limit": {fmt.Sprint(limit)}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := f.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var st metav1.Status
		_ = json.NewDecoder(resp.Body).Decode(&st)
		return fmt.Errorf("query %q: %d %s", q, resp.StatusCode, st.Message)
	}
	return json.NewDecoder(resp.Body).Decode(into)
}

// queries times label, name and image queries over the whole fleet,
// each answering its first page (100 objects).
func (f *searchFleet) queries(ctx context.Context) error {
	kinds := []struct {
		what, target string
		q            func(i int) string
	}{
		{"label query (app=…, a fiftieth of the fleet)", "< 200 ms PostgreSQL, < 500 ms embedded", func(i int) string { return fmt.Sprintf("app=app-%d", i%50) }},
		{"name search (a word of the name)", "", func(i int) string { return fmt.Sprintf("app-%d-%d", i%50, 50*(i%20)+i%50) }},
		{"image search (team and app)", "< 200 ms PostgreSQL, < 500 ms embedded", func(i int) string { return fmt.Sprintf("image=team-%d/app-%d", i%20, i%50) }},
		{"status query (kind=Pod status=CrashLoopBackOff)", "", func(int) string { return "kind=Pod status=CrashLoopBackOff" }},
	}
	for _, k := range kinds {
		times := make([]time.Duration, 0, *searchQueries)
		found := 0
		for i := range *searchQueries {
			var res searchv1alpha1.SearchResult
			began := time.Now()
			if err := f.query(ctx, k.q(i), 100, &res); err != nil {
				return err
			}
			times = append(times, time.Since(began))
			found += len(res.Items)
		}
		if found == 0 {
			return fmt.Errorf("%s found nothing", k.what)
		}
		p50, p99 := percentiles(times)
		row(k.what+", p50 / p99", millis(p50)+" / "+millis(p99), k.target)
	}
	return nil
}

// changes times one object change at a time from the agent's post to the
// first query that finds it.
func (f *searchFleet) changes(ctx context.Context, names []string) error {
	lat := make([]time.Duration, 0, *searchChanges)
	for i := range *searchChanges {
		n := names[(i*7919)%len(names)]
		v, _ := f.agents.Load(n)
		a := v.(*hollowAgent)
		o := searchObject(n, i%*searchObjects, 2+i)
		o.Labels["changed"] = fmt.Sprintf("c%d", i)
		began := time.Now()
		if err := f.post(ctx, a, &searchv1alpha1.ChangeBatch{Seq: int64(1000 + i), Upserts: []searchv1alpha1.Object{o}}); err != nil {
			return err
		}
		for {
			var res searchv1alpha1.SearchResult
			if err := f.query(ctx, fmt.Sprintf("cluster=%s changed=c%d", n, i), 10, &res); err != nil {
				return err
			}
			if len(res.Items) == 1 {
				break
			}
			if time.Since(began) > 30*time.Second {
				return fmt.Errorf("change %d of cluster %s not searchable after 30 s", i, n)
			}
		}
		lat = append(lat, time.Since(began))
	}
	p50, p99 := percentiles(lat)
	row("object change → searchable, p50 / p99", millis(p50)+" / "+millis(p99), "< 2 s p99")
	return nil
}

// indexBytes is the index's size: the SQLite files in the hub's data
// directory, or the PostgreSQL database's.
func (f *searchFleet) indexBytes(ctx context.Context, kind, dir string) (int64, error) {
	if kind == "postgres" {
		return postgresDatabaseSize(ctx, f.dsn)
	}
	var total int64
	matches, err := filepath.Glob(hubsearch.IndexPath(dir) + "*")
	if err != nil {
		return 0, err
	}
	for _, m := range matches {
		st, err := os.Stat(m)
		if err != nil {
			return 0, err
		}
		total += st.Size()
	}
	return total, nil
}
