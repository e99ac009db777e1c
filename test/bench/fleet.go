package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/hub"
	"github.com/flotilla-io/flotilla/test/framework"
)

var (
	fleetWorks       = flag.Int("works-per-cluster", 10, "fleet: ManifestWorks each cluster holds in the steady state")
	fleetSteady      = flag.Duration("steady", 10*time.Second, "fleet: how long the steady state's hub CPU is measured")
	fleetProbes      = flag.Int("probes", 25, "fleet: single ManifestWorks timed from create to Applied while the fleet holds steady")
	fleetResync      = flag.Duration("agent-resync", 5*time.Minute, "fleet: how often each simulated agent checks each work against its shared spoke")
	fleetSpokes      = flag.Int("spokes", 0, "fleet: spoke API servers the simulated clusters share (0: one per 1,000 clusters)")
	fleetSpokeMemory = flag.String("spoke-memory-limit", "1536Mi", "fleet: each shared spoke's --memory-limit (empty: none)")
	fleetSimGOGC     = flag.Int("sim-gogc", -1, "fleet: the simulator's GOGC (0: as the environment says; default: 25 with -fleet-mode hollow, where memory per simulated cluster is a figure, else as the environment says). The GOGC variable would reach the hub and spokes it starts too")
	fleetPprof       = flag.String("pprof-dir", "", "fleet: write CPU and heap profiles of the hub's steady state here (needs a hub built by -pprof-hub)")
)

// fleet is N simulated clusters joined to one hub process.
type fleet struct {
	hub *hubUnderTest
	// spokes are the shared spokes; cluster i applies into spokes[i%len].
	spokes []*framework.HubProcess
	cfg    *rest.Config
	c      client.Client
	names  []string
	track  *tracker
	mem    *memoryWatch
	// rssEmpty and liveEmpty are the hub's RSS and live heap (pprof
	// hubs only) before any cluster joined.
	rssEmpty, liveEmpty int64
	// simEmpty is this process's RSS before any simulated cluster ran.
	simEmpty int64
	// reqEmpty are the hub's requests by verb and resource before any
	// cluster joined; nil when the hub serves no request metrics.
	reqEmpty map[string]float64
}

// printRequestsSince prints the hub's requests since before, each per
// cluster of the n a fan-out reached; those under one per ten clusters
// are left out.
func (f *fleet) printRequestsSince(ctx context.Context, what string, before map[string]float64, n int) {
	if before == nil {
		return
	}
	if after := f.requests(ctx); after != nil {
		printRequests(what, before, after, float64(n)/10, n)
	}
}

// requests reads the hub's requests by verb and resource, or nil (said once).
func (f *fleet) requests(ctx context.Context) map[string]float64 {
	r, err := hubRequests(ctx, f.cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: hub requests by verb and resource:", err)
	}
	return r
}

// benchFleet runs the fleet simulator (see docs/benchmarks.md, "Fleet
// simulator"): N clusters register, hold 10 ManifestWorks each, and
// receive single works, a ManifestWorkReplicaSet and a Policy, while the
// hub process's memory and CPU are read from /proc.
func benchFleet(ctx context.Context, e *env) error {
	if err := checkFleetMode(); err != nil {
		return err
	}
	for mode := range strings.SplitSeq(*fleetModes, ",") {
		*fleetMode = mode
		fmt.Printf("\n### fleet of %s agents\n", mode)
		// Each fleet on a hub of its own.
		me := *e
		me.workDir = filepath.Join(e.workDir, "fleet-"+mode)
		if err := os.MkdirAll(me.workDir, 0o700); err != nil {
			return err
		}
		if err := benchFleetMode(ctx, &me); err != nil {
			return fmt.Errorf("%s agents: %w", mode, err)
		}
	}
	return nil
}

// benchFleetMode runs the fleet simulator in the mode fleetMode says.
func benchFleetMode(ctx context.Context, e *env) error {
	n := *benchClusters
	quietKlog()
	if gogc := simGOGC(); gogc > 0 {
		defer debug.SetGCPercent(debug.SetGCPercent(gogc))
	}
	// The memory watch stops the run, saying why, before the machine runs
	// out of memory.
	ctx, abort := context.WithCancelCause(ctx)
	defer abort(nil)
	f, stop, err := startFleet(ctx, e, n, abort)
	if err != nil {
		return withCause(ctx, err)
	}
	defer stop()
	for _, step := range []func(context.Context) error{f.steadyState, f.singleWorkLatency, f.fanOut, f.policy} {
		if err := step(ctx); err != nil {
			f.mem.print()
			return fmt.Errorf("%w\n%s", withCause(ctx, err), saveOutput(f.hub, f.spokes))
		}
	}
	if f.reqEmpty != nil {
		if all := f.requests(ctx); all != nil {
			printRequests("whole run", f.reqEmpty, all, float64(n)/10, 0)
		}
	}
	f.mem.print()
	return nil
}

// registrationProfile is how long -pprof-dir profiles the hub from the
// start of registration.
const registrationProfile = 90 * time.Second

// startFleet starts the hub and the shared spokes, joins n simulated
// clusters, accepts them and prints scenario (a)'s figures.
func startFleet(ctx context.Context, e *env, n int, abort context.CancelCauseFunc) (_ *fleet, stop func(), err error) {
	var cl cleanups
	defer func() {
		if err != nil {
			cl.run()
		}
	}()
	if err := checkFleetMode(); err != nil {
		return nil, cl.run, err
	}
	f := &fleet{names: clusterNames("sim", n)}
	if err := f.startParts(ctx, e, abort, &cl); err != nil {
		return nil, cl.run, err
	}
	bootstrap, err := f.connect(ctx, e, &cl)
	if err != nil {
		return nil, cl.run, err
	}
	before, err := f.readEmpty(ctx)
	if err != nil {
		return nil, cl.run, err
	}
	if err := f.register(ctx, bootstrap, before, &cl); err != nil {
		return nil, cl.run, err
	}
	return f, cl.run, nil
}

// startParts starts the hub under test, the shared spokes and the memory
// watch.
func (f *fleet) startParts(ctx context.Context, e *env, abort context.CancelCauseFunc, cl *cleanups) error {
	var err error
	if f.hub, err = startHubUnderTest(ctx, e, filepath.Join(e.workDir, "fleet-hub")); err != nil {
		return err
	}
	cl.add(f.hub.Stop)
	// Hollow agents need no spoke: they compute what a spoke would say.
	spokes := spokeCount(len(f.names))
	if hollow() {
		spokes = 0
	}
	for i := range spokes {
		spoke, err := startSpoke(ctx, e, filepath.Join(e.workDir, fmt.Sprintf("fleet-spoke-%d", i)))
		if err != nil {
			return err
		}
		f.spokes = append(f.spokes, spoke)
		cl.add(func() { spoke.Stop(time.Minute) })
	}
	if hollow() {
		row("(a) simulated clusters", "hollow agents (-fleet-mode hollow), no spoke", "")
	} else {
		n := len(f.names)
		row("(a) shared spokes", fmt.Sprintf("%d (%d clusters each)", len(f.spokes), (n+len(f.spokes)-1)/len(f.spokes)), "")
	}
	if f.mem, err = f.watchMemory(ctx, abort); err != nil {
		return err
	}
	cl.add(f.mem.stop)
	return nil
}

// connect runs `flotilla init` on the hub, makes its client and starts
// the tracker of its works; it returns the bootstrap kubeconfig.
func (f *fleet) connect(ctx context.Context, e *env, cl *cleanups) (bootstrap string, err error) {
	join, err := initHub(ctx, f.hub.HubProcess)
	if err != nil {
		return "", err
	}
	bootstrap, err = bootstrapKubeconfig(f.hub.Kubeconfig, join.URL, join.Token, filepath.Join(e.workDir, "fleet-bootstrap.kubeconfig"))
	if err != nil {
		return "", err
	}
	if f.cfg, err = clientcmd.BuildConfigFromFlags("", f.hub.Kubeconfig); err != nil {
		return "", err
	}
	f.cfg.QPS, f.cfg.Burst = 500, 1000
	if f.c, err = client.New(f.cfg, client.Options{Scheme: hub.Scheme()}); err != nil {
		return "", err
	}
	trackCtx, stopTracking := context.WithCancel(ctx)
	cl.add(stopTracking)
	if f.track, err = startTracker(trackCtx, f.cfg); err != nil {
		return "", err
	}
	return bootstrap, nil
}

// fleetCPU is the CPU time used so far by the hub (and, when it says, its
// controllers) and by this process (the simulated agents).
type fleetCPU struct{ hub, controllers, sim time.Duration }

func (f *fleet) readCPU() (fleetCPU, error) {
	var c fleetCPU
	var err error
	if c.hub, c.controllers, err = f.hub.cpu(); err != nil {
		return c, err
	}
	c.sim, err = cpuTime(os.Getpid())
	return c, err
}

// readEmpty reads the hub and this process before any cluster joined.
func (f *fleet) readEmpty(ctx context.Context) (fleetCPU, error) {
	var err error
	if f.rssEmpty, err = f.hub.rss(); err != nil {
		return fleetCPU{}, err
	}
	if f.liveEmpty, err = f.hub.liveHeap(ctx); err != nil {
		return fleetCPU{}, err
	}
	before, err := f.readCPU()
	if err != nil {
		return before, err
	}
	if f.simEmpty, err = framework.RSSOf(os.Getpid()); err != nil {
		return before, err
	}
	f.reqEmpty = f.requests(ctx)
	return before, nil
}

// register starts the simulated agents, accepts their clusters, waits
// until they are Available and in the default ClusterSet, and prints
// scenario (a)'s figures.
func (f *fleet) register(ctx context.Context, bootstrap string, before fleetCPU, cl *cleanups) error {
	n := len(f.names)
	started := time.Now()
	var stopAgents func()
	var err error
	if hollow() {
		stopAgents, err = startHollowAgents(ctx, f.names, bootstrap, f.cfg)
	} else {
		stopAgents, err = startAgents(ctx, f.names, f.spokeKubeconfigs(), bootstrap, *fleetResync)
	}
	if err != nil {
		return err
	}
	cl.add(stopAgents)
	stopProfiles := f.profileDuring(ctx, "registration", registrationProfile)
	acceptedAt, err := acceptAll(ctx, f.hub.HubProcess, f.c, f.names)
	stopProfiles()
	if err != nil {
		return err
	}
	available := time.Since(started)
	cpuAfter, ctlAfter, err := f.hub.cpu()
	if err != nil {
		return err
	}
	rss, err := f.hub.rss()
	if err != nil {
		return err
	}
	row(fmt.Sprintf("(a) %d clusters: start to accepted", n), seconds(acceptedAt.Sub(started)), "")
	row(fmt.Sprintf("(a) %d clusters: start to all Available", n), seconds(available), "< 180 s for 1,000")
	// The hub labels each new cluster into the default ClusterSet; a
	// Placement of that set sees a cluster only once it is labelled.
	inSet := func(mc *clusterv1.ManagedCluster) bool {
		return mc.Labels[clusterv1beta2.ClusterSetLabel] == clusterv1beta2.DefaultManagedClusterSetName
	}
	if err := waitAllClusters(ctx, f.c, f.names, "in the default set", 30*time.Minute, inSet); err != nil {
		return err
	}
	row(fmt.Sprintf("(a) %d clusters: start to all in the default ClusterSet", n), seconds(time.Since(started)), "")
	if f.reqEmpty != nil {
		if joined := f.requests(ctx); joined != nil {
			printRequests("(a) registration", f.reqEmpty, joined, float64(n)/10, 0)
		}
	}
	row("(a) hub CPU while registering", cores(cpuAfter-before.hub, available), "")
	if f.hub.controllers != nil {
		row("(a)   of which the hub controllers", cores(ctlAfter-before.controllers, available), "")
	}
	row("(a) hub RSS, empty → all joined", mib(f.rssEmpty)+" → "+mib(rss), "")
	if simAfter, err := cpuTime(os.Getpid()); err == nil {
		row("(a) simulator CPU while registering, per simulated cluster", fmt.Sprintf("%.1f ms", float64((simAfter-before.sim).Milliseconds())/float64(n)), "")
	}
	return nil
}

// steadyState gives every cluster its ManifestWorks, waits until all are
// Applied, and then reads the hub's memory and CPU while the agents only
// heartbeat: scenario (b).
func (f *fleet) steadyState(ctx context.Context) error {
	if err := f.createSteadyWorks(ctx); err != nil {
		return err
	}
	// Let the status writes of the rush drain before measuring: 10 ms a
	// cluster, from 3 s to 10 s.
	if err := pause(ctx, min(10*time.Second, max(3*time.Second, time.Duration(len(f.names))*10*time.Millisecond))); err != nil {
		return err
	}
	s, err := f.measureSteady(ctx)
	if err != nil {
		return err
	}
	if err := f.printHubSteady(ctx, s); err != nil {
		return err
	}
	if err := f.printHubWatches(ctx); err != nil {
		return err
	}
	if err := f.printHubHeap(ctx); err != nil {
		return err
	}
	f.printSimulatorSteady(s)
	counts, err := countObjects(ctx, f.cfg)
	if err != nil {
		return err
	}
	for i, gvr := range countedResources {
		row("(b)   hub objects: "+gvr.Resource, fmt.Sprint(counts[i]), "")
	}
	return nil
}

// createSteadyWorks creates -works-per-cluster works in every cluster,
// 16 at a time, and waits until all are Applied.
func (f *fleet) createSteadyWorks(ctx context.Context) error {
	per := *fleetWorks
	var keys []string
	for i := range per {
		keys = append(keys, keysIn(f.names, fmt.Sprintf("steady-%02d", i))...)
	}
	started := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for _, cluster := range f.names {
		for i := range per {
			g.Go(func() error {
				err := f.c.Create(gctx, fleetWork(cluster, fmt.Sprintf("steady-%02d", i)))
				if err != nil {
					return fmt.Errorf("create ManifestWork %s/steady-%02d: %w", cluster, i, err)
				}
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		return err
	}
	created := time.Since(started)
	last, err := f.track.waitAll(ctx, "steady-state works Applied", keys, true, 30*time.Minute)
	if err != nil {
		return err
	}
	row(fmt.Sprintf("(b) %d works created", len(keys)), seconds(created), "")
	row(fmt.Sprintf("(b) %d works created and all Applied", len(keys)), seconds(last.Sub(started)), "")
	return nil
}

// steadySample is what the steady state's -steady measured.
type steadySample struct {
	before, after fleetCPU
	wall          time.Duration
	sim           simulatorSample
}

// measureSteady reads the CPU of the hub and the simulator over -steady
// and then the simulator's memory, and prints the hub's requests in
// between (with -pprof-dir, while it profiles the hub).
func (f *fleet) measureSteady(ctx context.Context) (steadySample, error) {
	var s steadySample
	var profiles sync.WaitGroup
	if *fleetPprof != "" {
		profiles.Go(func() {
			if err := f.hub.profile(ctx, *fleetPprof, *fleetSteady, false); err != nil {
				fmt.Fprintln(os.Stderr, "bench: profile the hub:", err)
			}
		})
	}
	var err error
	if s.before, err = f.readCPU(); err != nil {
		return s, err
	}
	reqBefore := f.requests(ctx)
	started := time.Now()
	if err := pause(ctx, *fleetSteady); err != nil {
		return s, err
	}
	if s.after, err = f.readCPU(); err != nil {
		return s, err
	}
	// The simulator's memory now, before this process reads the hub's
	// metrics and profiles: their parsing would be counted as the
	// agents'.
	if s.sim, err = sampleSimulator(); err != nil {
		return s, err
	}
	if reqBefore != nil {
		if reqAfter := f.requests(ctx); reqAfter != nil {
			printRequests(fmt.Sprintf("(b) steady state (%s)", *fleetSteady), reqBefore, reqAfter, 1, 0)
		}
	}
	s.wall = time.Since(started)
	profiles.Wait()
	return s, nil
}

// printHubSteady prints the hub's CPU over the steady state and its RSS
// and etcd database after it.
func (f *fleet) printHubSteady(ctx context.Context, s steadySample) error {
	rss, err := f.hub.rss()
	if err != nil {
		return err
	}
	n := len(f.names)
	use := (s.after.hub - s.before.hub).Seconds() / s.wall.Seconds()
	row(fmt.Sprintf("(b) hub CPU, steady state (%s)", *fleetSteady), fmt.Sprintf("%.2f cores", use), "")
	if f.hub.controllers != nil {
		row("(b)   of which the hub controllers", cores(s.after.controllers-s.before.controllers, s.wall), "")
	}
	row("(b) hub CPU per cluster", fmt.Sprintf("%.2f ms/s", use*1000/float64(n)), "")
	row("(b) hub RSS, steady state", mib(rss), "< 4 GiB for 5,000")
	row("(b) hub RSS per cluster (minus the empty hub)", fmt.Sprintf("%.0f KiB", float64(rss-f.rssEmpty)/float64(n)/1024), "")
	// The part of the RSS that is pages of mapped files (the binary,
	// etcd's database) is one the kernel may take back and read again.
	anon, file, err := f.hub.rssParts()
	if err != nil {
		return err
	}
	db, err := f.hub.etcdDatabase()
	if err != nil {
		return err
	}
	row("(b) hub RSS: anonymous / mapped files (binary, etcd's database)", mib(anon)+" / "+mib(file), "")
	row("(b) hub etcd database file", mib(db), "")
	return nil
}

// printHubWatches prints, from the hub's metrics, the history its watch
// caches keep and the watches open on it.
func (f *fleet) printHubWatches(ctx context.Context) error {
	n := len(f.names)
	metrics, err := hubMetrics(ctx, f.cfg)
	if err != nil {
		return err
	}
	caches := hubWatchCaches(metrics, float64(n))
	for _, c := range caches {
		row("(b) hub watch cache history, "+c.resource, fmt.Sprintf("%.0f events kept (%.0f received)", c.kept(), c.events), "")
	}
	watches := hubOpenWatches(metrics)
	var open float64
	for _, w := range watches {
		open += w.n
	}
	row("(b) hub open watches (apiserver_longrunning_requests), per cluster", fmt.Sprintf("%.0f (%.2f)", open, open/float64(n)), "")
	for _, w := range watches {
		// The resources with an open watch per ten clusters or more.
		if w.n >= float64(n)/10 {
			row("      "+w.key, fmt.Sprintf("%.0f", w.n), "")
		}
	}
	return nil
}

// printHubHeap prints the hub's heap after a GC, when it serves pprof.
func (f *fleet) printHubHeap(ctx context.Context) error {
	n := len(f.names)
	m, err := f.hub.heapAfterGC(ctx, *fleetPprof)
	if err != nil || m.live == 0 {
		return err
	}
	row("(b) hub Go heap live after a GC", mib(m.live), "")
	row("(b) hub live heap per cluster (minus the empty hub's)", fmt.Sprintf("%.0f KiB", float64(m.live-f.liveEmpty)/float64(n)/1024), "")
	// What else the hub's RSS is made of: the free slots in the
	// spans its live objects are in (a collector that moves nothing
	// cannot give those back), free spans not yet returned, stacks.
	row("(b) hub heap spans in use / free spans kept / goroutine stacks", mib(m.inUse)+" / "+mib(m.idleKept)+" / "+mib(m.stacks), "")
	row("(b) hub goroutines, per cluster", fmt.Sprintf("%d (%.1f)", m.goroutines, float64(m.goroutines)/float64(n)), "")
	return nil
}

// printSimulatorSteady prints what the simulated agents cost in the
// steady state.
func (f *fleet) printSimulatorSteady(s steadySample) {
	n := len(f.names)
	sim := s.sim
	row(fmt.Sprintf("(b) simulator RSS, before the agents → steady state (%s agents)", *fleetMode), mib(f.simEmpty)+" → "+mib(sim.rss), "")
	row(fmt.Sprintf("(b) simulator RSS per simulated cluster (%s agents, minus the simulator before them)", *fleetMode),
		fmt.Sprintf("%.0f KiB", float64(sim.rss-f.simEmpty)/float64(n)/1024), "< 200 KiB hollow")
	// What that RSS is made of, as the hub's above: the spans that hold
	// objects (and garbage, and the free slots between them), the free
	// spans the runtime keeps, the stacks.
	perCluster := func(b uint64) string { return fmt.Sprintf("%.0f", float64(b)/float64(n)/1024) }
	row("(b) simulator heap spans in use / free spans kept / goroutine stacks, per simulated cluster (all of the simulator's)",
		perCluster(sim.held.HeapInuse)+" / "+perCluster(sim.held.HeapIdle-sim.held.HeapReleased)+" / "+perCluster(sim.held.StackInuse)+" KiB", "")
	// The live heap and stacks are what the agents hold.
	row(fmt.Sprintf("(b) simulator live heap + goroutine stacks after a GC, per simulated cluster (%s agents, all of the simulator's)", *fleetMode),
		perCluster(sim.live.HeapAlloc+sim.live.StackInuse)+" KiB", "")
	row("(b)   of which live heap / goroutine stacks, per simulated cluster", perCluster(sim.live.HeapAlloc)+" / "+perCluster(sim.live.StackInuse)+" KiB", "")
	row("(b) simulator GOGC / GOMEMLIMIT", gcSettings(), "")
	row("(b) simulator goroutines per simulated cluster", fmt.Sprintf("%.1f", float64(sim.goroutines)/float64(n)), "")
	row(fmt.Sprintf("(b) simulator CPU per simulated cluster (%s agents)", *fleetMode), fmt.Sprintf("%.3f ms/s", (s.after.sim-s.before.sim).Seconds()*1000/s.wall.Seconds()/float64(n)), "")
}

// singleWorkLatency creates single ManifestWorks, spread over the
// clusters, at 5 a second while the fleet holds steady, and reports the
// latency from each create to Applied on the hub: scenario (e).
func (f *fleet) singleWorkLatency(ctx context.Context) error {
	const rate = 5
	n := *fleetProbes
	created := make(map[string]time.Time, n)
	var keys []string
	var answered []time.Duration
	tick := time.NewTicker(time.Second / rate)
	defer tick.Stop()
	stopProfiles := f.profileDuring(ctx, "probes", time.Duration(n)*time.Second/rate)
	defer stopProfiles()
	for i := range n {
		<-tick.C
		cluster := f.names[(i*7919)%len(f.names)]
		mw := fleetWork(cluster, fmt.Sprintf("probe-%04d", i))
		key := cluster + "/" + mw.Name
		start := time.Now()
		created[key] = start
		if err := f.c.Create(ctx, mw); err != nil {
			return fmt.Errorf("create ManifestWork %s: %w", key, err)
		}
		answered = append(answered, time.Since(start))
		keys = append(keys, key)
	}
	if _, err := f.track.waitAll(ctx, "probe works Applied", keys, true, 5*time.Minute); err != nil {
		return err
	}
	stopProfiles()
	at, _ := f.track.times(keys, true)
	latencies := make([]time.Duration, len(at))
	for i, t := range at {
		latencies[i] = t.Sub(created[keys[i]])
	}
	p50, p99 := percentiles(latencies)
	row(fmt.Sprintf("(e) single work create → Applied, p50 (%d at %d/s)", n, rate), millis(p50), "")
	row(fmt.Sprintf("(e) single work create → Applied, p99 (%d at %d/s)", n, rate), millis(p99), "< 1 s")
	// How long the hub took to answer each create (admission, the write
	// to etcd): a tail here is the write path's, not a watch's.
	p50, p99 = percentiles(answered)
	row("(e)   create request answered, p50 / p99", millis(p50)+" / "+millis(p99), "")
	// The same as the objects record it, to the second: a figure far
	// below the one above means this process's watch was late, not the
	// agent.
	seen, _ := f.track.times(keys, false)
	for i, t := range seen {
		latencies[i] = t.Sub(created[keys[i]])
	}
	p50, p99 = percentiles(latencies[:len(seen)])
	row("(e)   create → seen by the benchmark's watch, p50 / p99", millis(p50)+" / "+millis(p99), "")
	stamps := f.track.stamps(keys)
	recorded := make([]time.Duration, len(stamps))
	for i, s := range stamps {
		recorded[i] = s[1].Sub(s[0])
	}
	p50, p99 = percentiles(recorded)
	row("(e)   creationTimestamp → Applied lastTransitionTime, p50 / p99 (1 s resolution)", seconds(p50)+" / "+seconds(p99), "")
	return nil
}

// percentiles sorts ds and returns its median and 99th percentile.
func percentiles(ds []time.Duration) (p50, p99 time.Duration) {
	if len(ds) == 0 {
		return 0, 0
	}
	slices.Sort(ds)
	return ds[len(ds)/2], ds[len(ds)*99/100]
}

// cpuMeter reads the CPU time of the hub, the shared spoke and this
// process (the simulated agents), to say which of them a scenario kept busy.
type cpuMeter struct {
	f       *fleet
	started time.Time
	at      [3]time.Duration
}

func (f *fleet) meterCPU() *cpuMeter {
	m := &cpuMeter{f: f, started: time.Now()}
	m.at = m.read()
	return m
}

func (m *cpuMeter) read() (at [3]time.Duration) {
	at[0], _, _ = m.f.hub.cpu()
	for _, s := range m.f.spokes {
		t, _ := cpuTime(s.Pid())
		at[1] += t
	}
	at[2], _ = cpuTime(os.Getpid())
	return at
}

// print prints a row of the cores each process used since the meter started.
func (m *cpuMeter) print(what string) {
	now, wall := m.read(), time.Since(m.started)
	row(what+": CPU of hub / spokes / simulated agents",
		fmt.Sprintf("%s / %s / %s", cores(now[0]-m.at[0], wall), cores(now[1]-m.at[1], wall), cores(now[2]-m.at[2], wall)), "")
}

// profileDuring, with -pprof-dir, takes CPU profiles of the hub's
// processes for d and of this process (the simulated agents) until the
// returned func is called, named after what.
func (f *fleet) profileDuring(ctx context.Context, what string, d time.Duration) (stop func()) {
	if *fleetPprof == "" {
		return func() {}
	}
	var wg sync.WaitGroup
	if len(f.hub.pprofDirs) > 0 {
		wg.Go(func() {
			if err := f.hub.profile(ctx, filepath.Join(*fleetPprof, what), d, true); err != nil {
				fmt.Fprintln(os.Stderr, "bench: profile the hub:", err)
			}
		})
	}
	dir := filepath.Join(*fleetPprof, what)
	err := os.MkdirAll(dir, 0o755)
	var out *os.File
	if err == nil {
		out, err = os.Create(filepath.Join(dir, "simulator-cpu.pprof"))
	}
	if err == nil {
		err = pprof.StartCPUProfile(out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: profile the simulator:", err)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			if err == nil {
				pprof.StopCPUProfile()
				out.Close()
			}
			wg.Wait()
		})
	}
}

// fleetWork is a ManifestWork of one ConfigMap, in the cluster's own
// namespace on the shared spoke so that no two simulated clusters write
// the same object.
func fleetWork(cluster, name string) *workv1.ManifestWork {
	mw := benchManifestWork(cluster, name)
	cm := mw.Spec.Workload.Manifests[0].Object.(*corev1.ConfigMap)
	cm.Namespace = "agent-" + cluster
	return mw
}

// writeHeapProfile writes this process's heap profile: what the simulated
// agents cost.
func writeHeapProfile(file string) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// simGOGC is the simulator's GOGC from -sim-gogc, 0 for the environment's.
func simGOGC() int {
	if *fleetSimGOGC < 0 {
		if hollow() {
			return 25
		}
		return 0
	}
	return *fleetSimGOGC
}

// gcSettings says how this process collects garbage: GOGC (from
// -sim-gogc or the environment) and GOMEMLIMIT.
func gcSettings() string {
	gogc := os.Getenv("GOGC")
	switch {
	case simGOGC() > 0:
		gogc = fmt.Sprintf("%d (-sim-gogc)", simGOGC())
	case gogc == "":
		gogc = "100 (default)"
	}
	limit := "none"
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		limit = mib(l)
	}
	return gogc + " / " + limit
}

// writeProfile writes this process's named profile (pprof.Lookup).
func writeProfile(name, file string) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if err := pprof.Lookup(name).WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// pause waits d unless ctx ends first.
func pause(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// cores is CPU time used over a wall time, in cores.
func cores(cpu, wall time.Duration) string {
	return fmt.Sprintf("%.2f cores", cpu.Seconds()/wall.Seconds())
}

// spokeCount is how many spokes n simulated clusters share: -spokes, or
// one per 1,000 clusters. On one spoke, each agent's cluster-wide watches
// of what it applied (AppliedManifestWorks, and its objects by label) see
// every other agent's objects too: a cost that grows with the square of
// the clusters sharing it, which N real clusters do not pay.
func spokeCount(n int) int {
	if *fleetSpokes > 0 {
		return *fleetSpokes
	}
	return max(1, (n+999)/1000)
}

func (f *fleet) spokeKubeconfigs() []string {
	var files []string
	for _, s := range f.spokes {
		files = append(files, s.Kubeconfig)
	}
	return files
}

// withCause adds to err why ctx was cancelled, if it was for a reason of
// its own (the memory watch's).
func withCause(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() && !errors.Is(err, cause) {
		return fmt.Errorf("%w (%w)", err, cause)
	}
	return err
}

// simulatorSample is this process's memory at the end of the steady
// state: its RSS, the runtime's accounting of it then (held), and after
// a collection (live), and its goroutines.
type simulatorSample struct {
	rss        int64
	held, live runtime.MemStats
	goroutines int
}

// sampleSimulator samples the simulator's memory and, with -pprof-dir,
// writes its heap profile (of the collection it forces) and goroutines.
func sampleSimulator() (simulatorSample, error) {
	var s simulatorSample
	var err error
	if s.rss, err = framework.RSSOf(os.Getpid()); err != nil {
		return s, err
	}
	runtime.ReadMemStats(&s.held)
	runtime.GC()
	runtime.ReadMemStats(&s.live)
	s.goroutines = runtime.NumGoroutine()
	if *fleetPprof == "" {
		return s, nil
	}
	if err := os.MkdirAll(*fleetPprof, 0o755); err != nil {
		return s, err
	}
	if err := writeHeapProfile(filepath.Join(*fleetPprof, "simulator-heap.pprof")); err != nil {
		return s, err
	}
	return s, writeProfile("goroutine", filepath.Join(*fleetPprof, "simulator-goroutine.pprof"))
}
