package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
	"github.com/flotilla-io/flotilla/hub"
	"github.com/flotilla-io/flotilla/internal/mcs"
)

var (
	servicesClusters  = flag.Int("services-clusters", 100, "services: clusters in the one exclusive ManagedClusterSet")
	servicesCount     = flag.Int("services", 1000, "services: exported services, spread over the clusters")
	servicesEndpoints = flag.Int("services-endpoints", 10, "services: endpoints of each exported service in each exporting cluster (at most 100)")
	servicesExporters = flag.Int("services-exporters", 1, "services: clusters exporting each service")
	servicesChanges   = flag.Int("services-changes", 100, "services: endpoint changes timed, one at a time")
	servicesReal      = flag.Int("services-real-spokes", 3, "services: of the clusters, how many are real spokes (flotilla-dev-cluster) with real agents; the others are hollow")
	servicesFrom      = flag.String("services-changes-from", "both", "services: where the endpoint changes are made: real (the real spokes' EndpointSlices), hollow (the hollow clusters' ExportedServices) or both, in turns")
	servicesTimeout   = flag.Duration("services-change-timeout", 30*time.Second, "services: how long one endpoint change may take to reach every importing cluster before it counts as lost")
)

// servicesSet is the ManagedClusterSet of the services benchmark.
const servicesSet = "bench"

// servicesBench is the services benchmark's fleet: one hub, hollow and
// real clusters in one exclusive set, and the watches that time changes.
type servicesBench struct {
	l      *servicesLayout
	hub    *hubUnderTest
	cfg    *rest.Config
	c      client.Client
	spokes []*realSpoke
	hollow *hollowServices
	board  *probeBoard
}

// servicesMemory is the hub's memory at one point: RSS, the live heap
// after a collection (pprof hubs only), and etcd's database file.
type servicesMemory struct{ rss, live, db int64 }

// memory reads the hub's memory; with -pprof-dir, it writes the hub's
// heap profile of the collection it forces into the directory's
// subdirectory what (compare two with go tool pprof -diff_base).
func (b *servicesBench) memory(ctx context.Context, what string) (servicesMemory, error) {
	var m servicesMemory
	var err error
	if m.rss, err = b.hub.rss(); err != nil {
		return m, err
	}
	dir := ""
	if *fleetPprof != "" {
		dir = filepath.Join(*fleetPprof, what)
	}
	h, err := b.hub.heapAfterGC(ctx, dir)
	if err != nil {
		return m, err
	}
	m.live = h.live
	m.db, err = b.hub.etcdDatabase()
	return m, err
}

// benchServices runs the multi-cluster services benchmark (see
// docs/benchmarks.md, "Multi-cluster services"): clusters in one
// exclusive ManagedClusterSet export services, and endpoint changes are
// timed from the exporting cluster to every importing one, with the
// hub's writes per change and its memory per exported service.
func benchServices(ctx context.Context, e *env) error {
	quietKlog()
	var cl cleanups
	defer cl.run()
	names := clusterNames("member", *servicesClusters)
	l, err := newServicesLayout(names, *servicesReal, *servicesCount, *servicesEndpoints, *servicesExporters)
	if err != nil {
		return err
	}
	if err := checkChangesFrom(l); err != nil {
		return err
	}
	row("layout", l.describe(), "")
	b := &servicesBench{l: l, board: newProbeBoard(names)}
	if err := b.start(ctx, e, &cl); err != nil {
		return err
	}
	before, err := b.settle(ctx)
	if err != nil {
		return err
	}
	if err := b.exportAll(ctx); err != nil {
		return b.failed(err)
	}
	if err := pause(ctx, 10*time.Second); err != nil {
		return err
	}
	after, err := b.memory(ctx, "services-after")
	if err != nil {
		return err
	}
	b.printMemory(before, after)
	if err := b.printWatchCaches(ctx); err != nil {
		return err
	}
	return b.failed(b.changes(ctx))
}

// failed adds to err where the output of the hub and the spokes was saved.
func (b *servicesBench) failed(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w\n%s", err, saveOutput(b.hub, nil))
}

func checkChangesFrom(l *servicesLayout) error {
	switch *servicesFrom {
	case "both", "hollow":
		if l.real == len(l.clusters) {
			return fmt.Errorf("-services-changes-from %s: every cluster is a real spoke", *servicesFrom)
		}
		return nil
	case "real":
		if l.real == 0 {
			return fmt.Errorf("-services-changes-from real: -services-real-spokes is 0")
		}
		return nil
	}
	return fmt.Errorf("-services-changes-from %q: want real, hollow or both", *servicesFrom)
}

// start starts the hub and the real spokes, joins every cluster (hollow
// agents and, for the real spokes, the agent's code in this process),
// accepts them and puts them into the exclusive set.
func (b *servicesBench) start(ctx context.Context, e *env, cl *cleanups) error {
	var err error
	started := time.Now()
	if b.hub, err = startHubUnderTest(ctx, e, filepath.Join(e.workDir, "services-hub")); err != nil {
		return err
	}
	cl.add(b.hub.Stop)
	b.spokes = make([]*realSpoke, b.l.real)
	var g errgroup.Group
	for i := range b.spokes {
		g.Go(func() error {
			s, err := startRealSpoke(ctx, e, b.l.clusters[i])
			b.spokes[i] = s
			return err
		})
	}
	err = g.Wait()
	for _, s := range b.spokes {
		if s != nil {
			cl.add(s.stop)
		}
	}
	if err != nil {
		return err
	}
	row("hub and real spokes started", seconds(time.Since(started)), "")
	join, err := initHub(ctx, b.hub.HubProcess)
	if err != nil {
		return err
	}
	bootstrap, err := bootstrapKubeconfig(b.hub.Kubeconfig, join.URL, join.Token, filepath.Join(e.workDir, "services-bootstrap.kubeconfig"))
	if err != nil {
		return err
	}
	if b.cfg, err = clientcmd.BuildConfigFromFlags("", b.hub.Kubeconfig); err != nil {
		return err
	}
	b.cfg.QPS, b.cfg.Burst = 500, 1000
	if b.c, err = client.New(b.cfg, client.Options{Scheme: hub.Scheme()}); err != nil {
		return err
	}
	if err := b.watchHub(ctx, cl); err != nil {
		return err
	}
	b.hollow = newHollowServices(b.l, servicesSet, b.board)
	stopHollow, err := startHollowAgentsWith(ctx, b.l.clusters[b.l.real:], bootstrap, b.cfg, b.hollow.hooks())
	if err != nil {
		return err
	}
	cl.add(stopHollow)
	if b.l.real > 0 {
		var kubeconfigs []string
		for _, s := range b.spokes {
			kubeconfigs = append(kubeconfigs, s.kubeconfig)
		}
		stopReal, err := startAgents(ctx, b.l.clusters[:b.l.real], kubeconfigs, bootstrap, 0)
		if err != nil {
			return err
		}
		cl.add(stopReal)
	}
	joined := time.Now()
	if _, err := acceptAll(ctx, b.hub.HubProcess, b.c, b.l.clusters); err != nil {
		return err
	}
	row(fmt.Sprintf("%d clusters joined and Available", len(b.l.clusters)), seconds(time.Since(joined)), "")
	if err := b.formSet(ctx); err != nil {
		return err
	}
	if err := b.hollow.waitJoined(ctx, 5*time.Minute); err != nil {
		return err
	}
	for _, s := range b.spokes {
		if err := s.waitServiceExports(ctx, 2*time.Minute); err != nil {
			return err
		}
		if err := s.watchImports(ctx, b.l.namespace, b.board); err != nil {
			return err
		}
	}
	return nil
}

// formSet creates the exclusive ManagedClusterSet and labels every
// cluster into it (out of the default set the hub put it in).
func (b *servicesBench) formSet(ctx context.Context) error {
	inDefault := func(mc *clusterv1.ManagedCluster) bool {
		return mc.Labels[clusterv1beta2.ClusterSetLabel] == clusterv1beta2.DefaultManagedClusterSetName
	}
	if err := waitAllClusters(ctx, b.c, b.l.clusters, "in the default set", 5*time.Minute, inDefault); err != nil {
		return err
	}
	set := &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: servicesSet},
		Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.ExclusiveClusterSetLabel}}}
	if err := b.c.Create(ctx, set); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create ManagedClusterSet %s: %w", servicesSet, err)
	}
	patch := client.RawPatch("application/merge-patch+json", fmt.Appendf(nil, `{"metadata":{"labels":{%q:%q}}}`, clusterv1beta2.ClusterSetLabel, servicesSet))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for _, n := range b.l.clusters {
		g.Go(func() error {
			mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: n}}
			if err := b.c.Patch(gctx, mc, patch); err != nil {
				return fmt.Errorf("label ManagedCluster %s into set %s: %w", n, servicesSet, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	inSet := func(mc *clusterv1.ManagedCluster) bool {
		return mc.Labels[clusterv1beta2.ClusterSetLabel] == servicesSet
	}
	return waitAllClusters(ctx, b.c, b.l.clusters, "in set "+servicesSet, 5*time.Minute, inSet)
}

// watchHub watches the hub's ExportedServices and ImportedServices (one
// informer each, as an admin) to time the first two hops of each change.
func (b *servicesBench) watchHub(ctx context.Context, cl *cleanups) error {
	c, err := cache.New(b.cfg, cache.Options{Scheme: hub.Scheme()})
	if err != nil {
		return err
	}
	for _, o := range []client.Object{&mcsv1alpha1.ExportedService{}, &mcsv1alpha1.ImportedService{}} {
		inf, err := c.GetInformer(ctx, o)
		if err != nil {
			return err
		}
		on := func(obj any) {
			now := time.Now()
			switch o := obj.(type) {
			case *mcsv1alpha1.ExportedService:
				if p := b.board.current(o.Name); p != nil && o.Namespace == p.origin && groupsHold(o.Spec.Endpoints, p.addr) {
					b.board.hop(p, false, now)
				}
			case *mcsv1alpha1.ImportedService:
				if p := b.board.current(o.Name); p != nil && o.Namespace == mcs.SetNamespace(servicesSet) && clusterHolds(&o.Spec, p.origin, p.addr) {
					b.board.hop(p, true, now)
				}
			}
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: on, UpdateFunc: func(_, o any) { on(o) }}); err != nil {
			return err
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cl.add(cancel)
	go func() { _ = c.Start(cctx) }()
	if !c.WaitForCacheSync(ctx) {
		return fmt.Errorf("the benchmark's watches of ExportedServices and ImportedServices on the hub did not sync (are the mcs.flotilla.io CRDs installed?)")
	}
	return nil
}

// settle lets the hub make the set's namespace and grants, and reads its
// memory before any service is exported.
func (b *servicesBench) settle(ctx context.Context) (servicesMemory, error) {
	// Not a synchronisation: the baseline is read once the fleet's joining
	// writes have drained, as the fleet benchmark does.
	if err := pause(ctx, 10*time.Second); err != nil {
		return servicesMemory{}, err
	}
	return b.memory(ctx, "services-before")
}

// printWatchCaches prints the hub's watch caches of the services'
// objects: the events each keeps, which hold objects too.
func (b *servicesBench) printWatchCaches(ctx context.Context) error {
	metrics, err := hubMetrics(ctx, b.cfg)
	if err != nil {
		return err
	}
	for _, c := range hubWatchCaches(metrics, 0) {
		if c.resource == "exportedservices" || c.resource == "importedservices" {
			row("hub watch cache history, "+c.resource, fmt.Sprintf("%.0f events kept (%.0f received)", c.kept(), c.events), "")
		}
	}
	return nil
}

// exportAll exports every service from its clusters and waits until every
// importing cluster holds all of them.
func (b *servicesBench) exportAll(ctx context.Context) error {
	started := time.Now()
	var g errgroup.Group
	var hollowWrites int
	g.Go(func() error {
		var err error
		hollowWrites, err = b.hollow.exportAll(ctx)
		return err
	})
	for i, s := range b.spokes {
		g.Go(func() error { return s.export(ctx, b.l, i) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	row(fmt.Sprintf("exports written (%d ExportedServices by hollow clusters, ServiceExports in %d real spokes)", hollowWrites, len(b.spokes)), seconds(time.Since(started)), "")
	hollowWant := int64((len(b.l.clusters) - b.l.real) * b.l.services)
	// When each kind of importer first held every service, and a line of
	// progress every 30 s for long runs.
	var hollowAt time.Time
	spokeAt := make([]time.Time, len(b.spokes))
	lastSaid := time.Now()
	err := waitUntil(ctx, 20*time.Minute, func() (bool, string) {
		got := b.hollow.completed.Load()
		state := fmt.Sprintf("hollow clusters hold %d of %d imports", got, hollowWant)
		if got == hollowWant && hollowAt.IsZero() {
			hollowAt = time.Now()
		}
		done := got == hollowWant
		for i, s := range b.spokes {
			n := s.importsComplete(b.l)
			state += fmt.Sprintf("; %s holds EndpointSlices of %d of %d services", s.name, n, b.l.services)
			if n == b.l.services && spokeAt[i].IsZero() {
				spokeAt[i] = time.Now()
			}
			done = done && n == b.l.services
		}
		if time.Since(lastSaid) > 30*time.Second {
			fmt.Fprintf(os.Stderr, "bench: services: after %s, %s\n", time.Since(started).Round(time.Second), state)
			lastSaid = time.Now()
		}
		return done, state
	})
	if err != nil {
		return fmt.Errorf("the initial export did not reach every cluster: %w", err)
	}
	row(fmt.Sprintf("every service's ImportedService complete in the watch of all %d hollow clusters", len(b.l.clusters)-b.l.real), seconds(hollowAt.Sub(started)), "")
	for i, s := range b.spokes {
		row(fmt.Sprintf("every service's EndpointSlice in real spoke %s", s.name), seconds(spokeAt[i].Sub(started)), "")
	}
	row(fmt.Sprintf("every service imported in all %d clusters (EndpointSlices in the real spokes)", len(b.l.clusters)), seconds(time.Since(started)), "")
	return nil
}

// printMemory prints the hub's memory per exported service.
func (b *servicesBench) printMemory(before, after servicesMemory) {
	n := float64(b.l.services)
	row("hub RSS, before the exports → all imported (+10 s)", mib(before.rss)+" → "+mib(after.rss), "")
	row("hub RSS per exported service", fmt.Sprintf("%.1f KiB", float64(after.rss-before.rss)/n/1024), "< 20 KiB")
	if after.live > 0 {
		row("hub live heap after a GC, before → after", mib(before.live)+" → "+mib(after.live), "")
		row("hub live heap per exported service", fmt.Sprintf("%.1f KiB", float64(after.live-before.live)/n/1024), "< 20 KiB")
	} else {
		row("hub live heap", "not read (the release hub serves no pprof; -fleet-hub pprof does)", "")
	}
	row("hub etcd database file, before → after", mib(before.db)+" → "+mib(after.db), "")
}

// changes makes -services-changes endpoint changes one at a time, each
// in one exporting cluster, and prints how long each took to reach every
// importing cluster and how many writes it cost.
func (b *servicesBench) changes(ctx context.Context) error {
	hubBefore, err := hubRequests(ctx, b.cfg)
	if err != nil {
		return err
	}
	spokesBefore := make([]map[string]float64, len(b.spokes))
	for i, s := range b.spokes {
		if spokesBefore[i], err = hubRequests(ctx, s.cfg); err != nil {
			return fmt.Errorf("spoke %s: %w", s.name, err)
		}
	}
	var probes []*serviceProbe
	var lost []string
	fromReal := map[*serviceProbe]bool{}
	ownWrites := make([]int, len(b.spokes))
	for k := range *servicesChanges {
		c, real := b.changeOrigin(k)
		exports := b.l.exportsOf(c)
		if len(exports) == 0 {
			return fmt.Errorf("cluster %s exports no service: make -services at least -services-clusters", b.l.clusters[c])
		}
		j := exports[(k/2)%len(exports)]
		p := &serviceProbe{object: b.l.object(j), origin: b.l.clusters[c], addr: endpointAddr(11, k)}
		b.board.begin(p)
		p.start = time.Now()
		if real {
			err = b.spokes[c].change(ctx, b.l, c, j, p.addr)
			ownWrites[c]++
		} else {
			err = b.hollow.change(ctx, c, j, p.addr)
		}
		if err != nil {
			b.board.end()
			return err
		}
		select {
		case <-p.done:
		case <-time.After(*servicesTimeout):
			missing := b.board.missing(p)
			lost = append(lost, fmt.Sprintf("%s in %s: not in %d clusters after %s (%s)", p.object, p.origin, len(missing), *servicesTimeout, strings.Join(first(missing, 5), ", ")))
			fmt.Fprintf(os.Stderr, "bench: services: change %d lost: %s\n", k, lost[len(lost)-1])
		case <-ctx.Done():
			b.board.end()
			return ctx.Err()
		}
		b.board.end()
		probes = append(probes, p)
		fromReal[p] = real
		// Let the change's last writes (a status, a retry) land before the
		// next begins, so that each is counted with its own change.
		if err := pause(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
	b.printLatencies(probes, fromReal)
	for _, s := range lost {
		row("LOST change", s, "")
	}
	hubAfter, err := hubRequests(ctx, b.cfg)
	if err != nil {
		return err
	}
	printServiceWrites(len(probes), hubBefore, hubAfter)
	for i, s := range b.spokes {
		after, err := hubRequests(ctx, s.cfg)
		if err != nil {
			return fmt.Errorf("spoke %s: %w", s.name, err)
		}
		printSpokeWrites(s.name, len(probes), ownWrites[i], spokesBefore[i], after)
	}
	return nil
}

// changeOrigin is the cluster of change k and whether it is a real spoke:
// the real spokes and the hollow clusters in turns (-services-changes-from
// both), or only one kind.
func (b *servicesBench) changeOrigin(k int) (int, bool) {
	real := *servicesFrom == "real" || (*servicesFrom == "both" && b.l.real > 0 && k%2 == 0)
	if real {
		return (k / 2) % b.l.real, true
	}
	hollow := len(b.l.clusters) - b.l.real
	return b.l.real + (k*7919)%hollow, false
}

// printLatencies prints, per origin of the changes, how long they took to
// reach the hub and every importing cluster.
func (b *servicesBench) printLatencies(probes []*serviceProbe, fromReal map[*serviceProbe]bool) {
	type figure struct {
		what   string
		target string
		of     func(*serviceProbe) (time.Duration, bool)
	}
	since := func(t func(*serviceProbe) time.Time) func(*serviceProbe) (time.Duration, bool) {
		return func(p *serviceProbe) (time.Duration, bool) {
			at := t(p)
			return at.Sub(p.start), !at.IsZero()
		}
	}
	figures := []figure{
		{"hop 1: ExportedService on the hub holds it (benchmark's watch)", "", since(func(p *serviceProbe) time.Time { return p.exported })},
		{"hop 2: the set's ImportedService holds it (benchmark's watch)", "", since(func(p *serviceProbe) time.Time { return p.imported })},
		{"every hollow cluster's watch saw the ImportedService", "", func(p *serviceProbe) (time.Duration, bool) {
			return p.last(func(n string) bool { return !b.l.isReal(n) })
		}},
	}
	if b.l.real > 0 {
		figures = append(figures, figure{"EndpointSlice in every real spoke (real agents)", "", func(p *serviceProbe) (time.Duration, bool) { return p.last(b.l.isReal) }})
	}
	figures = append(figures, figure{fmt.Sprintf("every importing cluster (all %d)", len(b.l.clusters)), "p99 < 2 s", func(p *serviceProbe) (time.Duration, bool) {
		d, ok := p.last(func(string) bool { return true })
		return d, ok && len(p.seen) == len(b.l.clusters)
	}})
	origins := []struct {
		name string
		in   func(*serviceProbe) bool
	}{
		{"changes in real spokes (EndpointSlice written)", func(p *serviceProbe) bool { return fromReal[p] }},
		{"changes in hollow clusters (ExportedService written)", func(p *serviceProbe) bool { return !fromReal[p] }},
		{"all changes", func(*serviceProbe) bool { return true }},
	}
	for _, o := range origins {
		var of []*serviceProbe
		for _, p := range probes {
			if o.in(p) {
				of = append(of, p)
			}
		}
		// "all changes" would repeat the one group there is.
		if len(of) == 0 || (o.name == "all changes" && allSame(of, fromReal)) {
			continue
		}
		fmt.Printf("  %s: %d\n", o.name, len(of))
		for _, f := range figures {
			var ds []time.Duration
			for _, p := range of {
				if d, ok := f.of(p); ok {
					ds = append(ds, d)
				}
			}
			value := "none seen"
			if len(ds) > 0 {
				p50, p99 := percentiles(ds)
				value = millis(p50) + " / " + millis(p99)
				if len(ds) < len(of) {
					value += fmt.Sprintf(" (%d of %d)", len(ds), len(of))
				}
			}
			row("    change → "+f.what+", p50 / p99", value, f.target)
		}
	}
}

// allSame says whether every probe has one origin kind.
func allSame(probes []*serviceProbe, fromReal map[*serviceProbe]bool) bool {
	for _, p := range probes {
		if fromReal[p] != fromReal[probes[0]] {
			return false
		}
	}
	return true
}

// isWrite says whether a request key of hubRequests is a write.
func isWrite(key string) bool {
	verb, _, _ := strings.Cut(key, " ")
	switch verb {
	case "POST", "PUT", "PATCH", "DELETE", "DELETECOLLECTION", "APPLY", "CREATE", "UPDATE":
		return true
	}
	return false
}

// printServiceWrites prints the hub's writes of ExportedServices and
// ImportedServices per endpoint change, and the others it served meanwhile.
func printServiceWrites(changes int, before, after map[string]float64) {
	var exported, imported, other float64
	var keys []string
	for k, v := range after {
		d := v - before[k]
		if d <= 0 || !isWrite(k) {
			continue
		}
		switch {
		case strings.Contains(k, " exportedservices"):
			exported += d
			keys = append(keys, k)
		case strings.Contains(k, " importedservices"):
			imported += d
			keys = append(keys, k)
		default:
			other += d
		}
	}
	per := func(n float64) string { return fmt.Sprintf("%.2f", n/float64(changes)) }
	row("hub writes per change, hop 1 (agent → ExportedService)", per(exported), "1")
	row("hub writes per change, hop 2 (hub → ImportedService)", per(imported), "1")
	slices.Sort(keys)
	for _, k := range keys {
		row("      "+k, fmt.Sprintf("%.0f (%s per change)", after[k]-before[k], per(after[k]-before[k])), "")
	}
	row("other hub writes meanwhile (leases, status: not per change)", fmt.Sprintf("%.0f", other), "")
}

// printSpokeWrites prints a real spoke's writes of what the agent writes
// for imports and exports, per change, less the benchmark's own changes
// of that spoke's EndpointSlices.
func printSpokeWrites(name string, changes, own int, before, after map[string]float64) {
	var total float64
	var parts []string
	for k, v := range after {
		d := v - before[k]
		if d <= 0 || !isWrite(k) {
			continue
		}
		for _, r := range []string{" endpointslices", " serviceimports", " serviceexports", " services", " namespaces"} {
			if strings.Contains(k, r) {
				if k == "PUT endpointslices" {
					d -= float64(own)
				}
				if d > 0 {
					total += d
					parts = append(parts, fmt.Sprintf("%s %.0f", k, d))
				}
				break
			}
		}
	}
	slices.Sort(parts)
	row(fmt.Sprintf("spoke %s: agent's writes per change, hop 3 (hub → cluster)", name), fmt.Sprintf("%.2f", total/float64(changes)), "1 per change it imports")
	if len(parts) > 0 {
		row("      "+strings.Join(parts, ", "), "", "")
	}
}

func first(s []string, n int) []string { return s[:min(n, len(s))] }
