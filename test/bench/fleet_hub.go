package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/flotilla-io/flotilla/test/framework"
)

var (
	fleetLeaderElect = flag.Bool("hub-leader-elect", true, "fleet: run the hub under test with leader election (--leader-elect), as flotilla-hub does by default")
	fleetMemoryLimit = flag.String("hub-memory-limit", "", "fleet: the hub under test's --memory-limit (e.g. 5Gi; default none)")
	fleetGCPercent   = flag.Int("hub-gc-percent", 0, "fleet: the hub under test's --gc-percent (default: the hub's, or GOGC if set)")
	fleetCacheWorks  = flag.Bool("hub-watch-cache-manifestworks", false, "fleet: run the hub under test with --watch-cache-manifestworks (every ManifestWork in the API server's watch cache)")
)

var fleetHubMode = flag.String("fleet-hub", "release", "fleet: the hub under test: release (bin/flotilla-hub), "+
	"pprof (the same hub.Run serving pprof, built from test/bench/pprofhub) or "+
	"split (API server and etcd in one pprof process, the controllers in another, to measure the controllers alone)")

// hubUnderTest is the hub process of the fleet, or its two halves.
type hubUnderTest struct {
	*framework.HubProcess
	// controllers is the controllers' process in split mode, else nil.
	controllers *framework.Process
	// pprofDirs are the data directories whose pprof.addr name a pprof
	// server, one per process; empty for the release binary.
	pprofDirs []string
}

// startHubUnderTest starts the fleet's hub as -fleet-hub says.
func startHubUnderTest(ctx context.Context, e *env, dataDir string) (*hubUnderTest, error) {
	switch *fleetHubMode {
	case "release":
		p, err := framework.StartHubProcess(ctx, e.binDir, dataDir, 2*time.Minute, hubArgs()...)
		return &hubUnderTest{HubProcess: p}, err
	case "pprof", "split":
	default:
		return nil, fmt.Errorf("-fleet-hub %q: want release, pprof or split", *fleetHubMode)
	}
	bin, err := buildPprofHub(ctx, e)
	if err != nil {
		return nil, err
	}
	if *fleetHubMode == "pprof" {
		p, err := framework.StartHubProcess(ctx, filepath.Dir(bin), dataDir, 2*time.Minute, append(hubArgs(), "--mode", "all")...)
		return &hubUnderTest{HubProcess: p, pprofDirs: []string{dataDir}}, err
	}
	p, err := framework.StartHubProcess(ctx, filepath.Dir(bin), dataDir, 2*time.Minute, append(hubArgs(), "--mode", "controlplane")...)
	if err != nil {
		return nil, err
	}
	ctlDir := dataDir + "-controllers"
	ctl, err := framework.StartProcess(ctx, bin, "--mode", "controllers", "--data-dir", ctlDir,
		"--kubeconfig", p.Kubeconfig, "--webhook-config", filepath.Join(dataDir, "webhook.json"), leaderElect())
	if err == nil {
		err = ctl.WaitForOutput("flotilla-hub is ready at", 2*time.Minute)
	}
	if err != nil {
		p.Stop(time.Minute)
		return nil, fmt.Errorf("start the hub controllers: %w", err)
	}
	return &hubUnderTest{HubProcess: p, controllers: ctl, pprofDirs: []string{dataDir, ctlDir}}, nil
}

func leaderElect() string { return fmt.Sprintf("--leader-elect=%t", *fleetLeaderElect) }

// hubArgs are the flags -hub-leader-elect, -hub-memory-limit,
// -hub-gc-percent and -hub-watch-cache-manifestworks give the hub.
func hubArgs() []string {
	args := []string{leaderElect()}
	if *fleetMemoryLimit != "" {
		args = append(args, "--memory-limit", *fleetMemoryLimit)
	}
	if *fleetGCPercent != 0 {
		args = append(args, fmt.Sprintf("--gc-percent=%d", *fleetGCPercent))
	}
	if *fleetCacheWorks {
		args = append(args, "--watch-cache-manifestworks")
	}
	return args
}

// startSpoke starts the spoke all simulated clusters share: an API server
// and etcd (with the kube controllers) and no Flotilla controllers, which
// a managed cluster does not run.
func startSpoke(ctx context.Context, e *env, dataDir string) (*framework.HubProcess, error) {
	bin, err := buildPprofHub(ctx, e)
	if err != nil {
		return nil, err
	}
	args := []string{"--mode", "controlplane"}
	if *fleetSpokeMemory != "" {
		args = append(args, "--memory-limit", *fleetSpokeMemory)
	}
	return framework.StartHubProcess(ctx, filepath.Dir(bin), dataDir, 2*time.Minute, args...)
}

// saveOutput saves the output of the fleet's processes to a file that
// outlives the benchmark's directory, and says where it is and which of
// them exited, for errors.
func saveOutput(h *hubUnderTest, spokes []*framework.HubProcess) string {
	type named struct {
		name string
		p    *framework.Process
	}
	procs := []named{{"hub", h.Process}, {"hub controllers", h.controllers}}
	for i, s := range spokes {
		procs = append(procs, named{fmt.Sprintf("spoke %d", i), s.Process})
	}
	var out, exited strings.Builder
	for _, p := range procs {
		if p.p == nil {
			continue
		}
		fmt.Fprintf(&out, "--- %s:\n%s\n", p.name, p.p.Output())
		if p.p.Exited() {
			fmt.Fprintf(&exited, "the %s process exited; ", p.name)
		}
	}
	f, err := os.CreateTemp("", "flotilla-fleet-*.log")
	if err != nil {
		return exited.String() + err.Error()
	}
	defer f.Close()
	_, _ = f.WriteString(out.String())
	return exited.String() + "the output of the hub and the spokes is in " + f.Name()
}

// Stop stops the hub's processes.
func (h *hubUnderTest) Stop() {
	if h.controllers != nil {
		h.controllers.Stop(time.Minute)
	}
	h.HubProcess.Stop(time.Minute)
}

// pids are the hub's processes.
func (h *hubUnderTest) pids() []int {
	if h.controllers == nil {
		return []int{h.Pid()}
	}
	return []int{h.Pid(), h.controllers.Pid()}
}

// rss is the resident memory of the hub's processes together.
func (h *hubUnderTest) rss() (int64, error) {
	var sum int64
	for _, pid := range h.pids() {
		r, err := framework.RSSOf(pid)
		if err != nil {
			return 0, err
		}
		sum += r
	}
	return sum, nil
}

// rssParts is the resident memory of the hub's processes together, as
// anonymous memory and mapped files' pages (framework.RSSPartsOf).
func (h *hubUnderTest) rssParts() (anon, file int64, err error) {
	for _, pid := range h.pids() {
		a, f, err := framework.RSSPartsOf(pid)
		if err != nil {
			return 0, 0, err
		}
		anon, file = anon+a, file+f
	}
	return anon, file, nil
}

// etcdDatabase is the size of the hub's etcd database file, which etcd
// maps: the pages of it that it has read count in the hub's RSS.
func (h *hubUnderTest) etcdDatabase() (int64, error) {
	fi, err := os.Stat(filepath.Join(h.DataDir, "etcd", "member", "snap", "db"))
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// cpu is the CPU time the hub's processes used together, and that of the
// controllers' process alone (0 unless split).
func (h *hubUnderTest) cpu() (all, controllers time.Duration, err error) {
	for _, pid := range h.pids() {
		t, err := cpuTime(pid)
		if err != nil {
			return 0, 0, err
		}
		all += t
		if h.controllers != nil && pid == h.controllers.Pid() {
			controllers = t
		}
	}
	return all, controllers, nil
}

// buildPprofHub builds test/bench/pprofhub as e.pprofHub, unless built.
func buildPprofHub(ctx context.Context, e *env) (string, error) {
	bin := e.pprofHub
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/flotilla-io/flotilla/test/bench/pprofhub")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the pprof hub (run the benchmark from the repository): %w\n%s", err, out)
	}
	return bin, nil
}

// profileNames names the hub's processes, in the order of pprofDirs, in
// the files of their profiles.
func (h *hubUnderTest) profileNames() []string {
	if h.controllers != nil {
		return []string{"controlplane", "controllers"}
	}
	return []string{"hub"}
}

// profile takes a CPU profile of d of each of the hub's processes into
// dir and prints its top; with heap, then a heap profile of the last
// collection each process ran. (The steady state passes false: its heap
// profiles are taken by heapAfterGC, after a forced collection that
// would otherwise add to the CPU it reports.)
func (h *hubUnderTest) profile(ctx context.Context, dir string, d time.Duration, heap bool) error {
	if len(h.pprofDirs) == 0 {
		return fmt.Errorf("-pprof-dir needs -fleet-hub pprof or split: the release hub serves no pprof")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	names := h.profileNames()
	var g errgroup.Group
	// The processes are profiled over the same period, the one whose CPU
	// time the steady state reports.
	for i, data := range h.pprofDirs {
		g.Go(func() error {
			base, err := pprofBase(data)
			if err != nil {
				return err
			}
			if err := fetch(ctx, base+fmt.Sprintf("profile?seconds=%d", int(d.Seconds())), filepath.Join(dir, names[i]+"-cpu.pprof")); err != nil || !heap {
				return err
			}
			return fetch(ctx, base+"heap", filepath.Join(dir, names[i]+"-heap.pprof"))
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for _, name := range names {
		cpuFile := filepath.Join(dir, name+"-cpu.pprof")
		out, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-nodecount", "15", cpuFile).Output()
		if err != nil {
			return fmt.Errorf("go tool pprof %s: %w", cpuFile, err)
		}
		fmt.Printf("      CPU profile of the %s process (%s):\n", name, cpuFile)
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			fmt.Println("        " + l)
		}
	}
	return nil
}

// pprofBase is the /debug/pprof/ URL of the pprof hub whose data
// directory is data.
func pprofBase(data string) (string, error) {
	addr, err := os.ReadFile(filepath.Join(data, "pprof.addr"))
	if err != nil {
		return "", err
	}
	return "http://" + string(addr) + "/debug/pprof/", nil
}

// get returns the body of a GET of url that answered 200 OK.
func get(ctx context.Context, url string) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return resp.Body, nil
}

// fetch saves what a GET of url returns to file.
func fetch(ctx context.Context, url, file string) error {
	body, err := get(ctx, url)
	if err != nil {
		return err
	}
	defer body.Close()
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// liveHeap is the Go heap the hub's processes hold after a garbage
// collection (HeapAlloc of /debug/pprof/heap?gc=1): what the hub needs,
// where RSS also holds garbage not yet collected. 0 for the release hub,
// which serves no pprof.
func (h *hubUnderTest) liveHeap(ctx context.Context) (int64, error) {
	m, err := h.heapAfterGC(ctx, "")
	return m.live, err
}

// heapMemory is what the Go runtime of the hub's processes holds, in
// bytes, summed over them: the live heap, the heap spans in use (the
// live heap and the free slots between its objects), the free spans not
// yet returned to the operating system, and goroutine stacks.
type heapMemory struct {
	live, inUse, idleKept, stacks int64
	// goroutines are the processes' goroutines, whose stacks those are.
	goroutines int64
}

// heapAfterGC reads the hub's heapMemory after a garbage collection, from
// the runtime.MemStats that each pprof process's heap profile ends with;
// zero without pprof processes. With dir, it also writes each process's
// heap profile there, of that collection: what is live, not what was
// allocated since the last one the process ran by itself.
func (h *hubUnderTest) heapAfterGC(ctx context.Context, dir string) (heapMemory, error) {
	var sum heapMemory
	names := h.profileNames()
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return heapMemory{}, err
		}
	}
	for i, data := range h.pprofDirs {
		base, err := pprofBase(data)
		if err != nil {
			return heapMemory{}, err
		}
		r, err := get(ctx, base+"heap?gc=1&debug=1")
		if err != nil {
			return heapMemory{}, err
		}
		body, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			return heapMemory{}, err
		}
		profile, stat := string(body), map[string]int64{}
		for _, name := range []string{"HeapAlloc", "HeapInuse", "HeapIdle", "HeapReleased", "Stack"} {
			if stat[name], err = memStat(profile, name); err != nil {
				return heapMemory{}, fmt.Errorf("the heap profile of %s: %w", data, err)
			}
		}
		if dir != "" {
			// A heap profile is of the last collection that ended: the
			// one just forced, unless the process ran another since.
			if err := fetch(ctx, base+"heap", filepath.Join(dir, names[i]+"-heap.pprof")); err != nil {
				return heapMemory{}, err
			}
		}
		sum.live += stat["HeapAlloc"]
		sum.inUse += stat["HeapInuse"]
		sum.idleKept += stat["HeapIdle"] - stat["HeapReleased"]
		sum.stacks += stat["Stack"]
		n, err := goroutines(ctx, base)
		if err != nil {
			return heapMemory{}, fmt.Errorf("the goroutines of %s: %w", data, err)
		}
		sum.goroutines += n
	}
	return sum, nil
}

// goroutines reads how many goroutines a pprof process has, from the
// first line of its goroutine profile in text form ("goroutine profile:
// total 123").
func goroutines(ctx context.Context, base string) (int64, error) {
	r, err := get(ctx, base+"goroutine?debug=1")
	if err != nil {
		return 0, err
	}
	defer r.Close()
	first, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		return 0, err
	}
	_, total, ok := strings.Cut(first, "total ")
	if !ok {
		return 0, fmt.Errorf("no total in %q", first)
	}
	return strconv.ParseInt(strings.TrimSpace(total), 10, 64)
}

// memStat is the runtime.MemStats field name, in bytes, of a heap profile
// in its text form ("# HeapAlloc = 123"; for Stack, in use / from the OS).
func memStat(profile, name string) (int64, error) {
	_, after, ok := strings.Cut(profile, "\n# "+name+" = ")
	if !ok {
		return 0, fmt.Errorf("no %s", name)
	}
	n, err := strconv.ParseInt(strings.Fields(after)[0], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	return n, nil
}
