package dev

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/flotilla/cli/cmdutil"
)

// devRegions and devEnvs label the dev clusters in turn: cluster1 is
// us-east/prod, cluster2 eu-west/dev, cluster3 ap-south/prod, and so on.
var (
	devRegions = []string{"us-east", "eu-west", "ap-south"}
	devEnvs    = []string{"prod", "dev"}
)

// devClusterName is the name of the i-th dev cluster, from 0.
func devClusterName(i int) string { return "cluster" + strconv.Itoa(i+1) }

// devClusterLabels are the ManagedCluster labels of the i-th dev cluster.
func devClusterLabels(i int) map[string]string {
	return map[string]string{
		"region": devRegions[i%len(devRegions)],
		"env":    devEnvs[i%len(devEnvs)],
	}
}

// devZones are the zones of a region's simulated nodes.
func devZones(region string) []string {
	return []string{region + "-a", region + "-b", region + "-c"}
}

// devTokenTTL is the lifetime of the join token that up creates: long
// enough for agents restarted by hand to join again.
const devTokenTTL = 7 * 24 * time.Hour

// devStopGrace is how long up waits for a process to stop when it cleans
// up after a failure.
const devStopGrace = 30 * time.Second

type devUpOptions struct {
	devOptions
	clusters int
	// clustersSet says --clusters was given, not defaulted.
	clustersSet bool
	nodes       int
	nodeCPU     string
	nodeMemory  string
	timeout     time.Duration
	keep        bool
}

func (o *devUpOptions) validate() error {
	if o.clusters < 1 || o.clusters > maxDevClusters {
		return fmt.Errorf("--clusters %d: choose 1 to %d clusters", o.clusters, maxDevClusters)
	}
	if o.nodes < 1 {
		return fmt.Errorf("--nodes %d: each cluster needs at least one node", o.nodes)
	}
	for flag, v := range map[string]string{"--node-cpu": o.nodeCPU, "--node-memory": o.nodeMemory} {
		q, err := resource.ParseQuantity(v)
		if err != nil || q.Sign() <= 0 {
			return fmt.Errorf("%s %q is not a positive quantity such as 8, 500m or 32Gi", flag, v)
		}
	}
	if o.timeout <= 0 {
		return fmt.Errorf("--timeout %s must be positive", o.timeout)
	}
	return o.validateDir()
}

// devUp is one run of `flotilla dev up`.
type devUp struct {
	*devUpOptions
	state    *devState
	prog     *cmdutil.Progress
	deadline time.Time
	// hub talks to the hub with its admin kubeconfig, once it runs.
	hub *cmdutil.Clients
	// watch makes a process that stops end whatever up waits for.
	watch func(*devProcess)
}

func (o *devUpOptions) run(ctx context.Context) error {
	started := time.Now()
	var bins devBinaries
	var err error
	if bins.hub, err = findBinary(hubBinary); err != nil {
		return err
	}
	if bins.cluster, err = findBinary(devClusterBinary); err != nil {
		return err
	}
	if bins.flotilla, err = os.Executable(); err != nil {
		return fmt.Errorf("cannot find this flotilla executable to run the agents with: %w", err)
	}
	existing, err := o.prepareDir()
	if err != nil {
		return err
	}
	up := &devUp{
		devUpOptions: o,
		state:        &devState{Created: started},
		prog:         cmdutil.NewProgress(o.Streams.ErrOut),
		deadline:     started.Add(o.timeout),
	}
	if existing != nil {
		up.state = existing
		if err := up.repair(ctx); err != nil {
			return err
		}
		return up.printSummary(time.Since(started))
	}
	if err := up.bringUp(ctx, bins); err != nil {
		up.cleanUp()
		return err
	}
	up.state.Ready = time.Now()
	if err := up.state.save(o.dir); err != nil {
		return err
	}
	return up.printSummary(time.Since(started))
}

// prepareDir returns the environment in --dir that came up once, for up
// to start what of it is missing; or it makes --dir ready for a new one
// and returns nil. It refuses a directory that is not a dev environment,
// and replaces one that never came up, unless some of it still runs.
func (o *devUpOptions) prepareDir() (*devState, error) {
	st, err := loadDevState(o.dir)
	switch {
	case err == nil:
		if !st.Ready.IsZero() {
			if o.clustersSet && len(st.Clusters) != o.clusters {
				o.Notef("Note: the dev environment in %s has %s; --clusters %d applies to a new one (%s first).",
					o.dir, countNoun(len(st.Clusters), "cluster", "clusters"), o.clusters, flotilla("dev down"+o.dirFlag()))
			}
			return st, nil
		}
		if running := st.running(); len(running) > 0 {
			return nil, fmt.Errorf("a dev environment that never came up completely still runs in %s (%s): stop it with `%s`, or choose another --dir",
				o.dir, countNoun(len(running), "process", "processes"), flotilla("dev down"+o.dirFlag()))
		}
		o.Notef("Removing the dev environment in %s, which never came up completely", o.dir)
		if err := os.RemoveAll(o.dir); err != nil {
			return nil, err
		}
	case errors.Is(err, errNoDevEnv):
		entries, err := os.ReadDir(o.dir)
		if err == nil && len(entries) > 0 {
			return nil, fmt.Errorf("%s exists and holds no dev environment: choose another --dir, or remove it", o.dir)
		}
	default:
		return nil, err
	}
	if err := os.MkdirAll(o.dir, 0o700); err != nil {
		return nil, fmt.Errorf("cannot create --dir %s: %w", o.dir, err)
	}
	return nil, nil
}

// dirFlag is " --dir DIR" unless --dir is the default, for the commands
// that messages suggest.
func (o *devOptions) dirFlag() string {
	if o.dir == defaultDevDir() {
		return ""
	}
	return " --dir " + o.dir
}

// devBinaries are the programs that up starts.
type devBinaries struct {
	hub, cluster, flotilla string
}

// bringUp starts every process and joins the clusters. Whatever it
// started is in the state file, even when it fails.
func (u *devUp) bringUp(ctx context.Context, bins devBinaries) (err error) {
	// A process that stops while up waits on anything ends the wait, with
	// the process's log as the error.
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	defer func() { err = u.cause(ctx, err) }()
	u.watchFrom(ctx, stop)

	if err := u.startServers(bins); err != nil {
		return err
	}
	u.prog.Report("Starting the hub and %s (logs in %s)", countNoun(u.clusters, "cluster", "clusters"), u.dir)
	if u.state.Hub.URL, err = u.serve(ctx, u.state.Hub.Process, hubReadyLine); err != nil {
		return err
	}
	u.prog.Report("Hub: ready at %s", u.state.Hub.URL)
	join, err := u.initHub(ctx)
	if err != nil {
		return err
	}
	for i := range u.state.Clusters {
		if err := u.startAgent(ctx, &u.state.Clusters[i], bins.flotilla, join); err != nil {
			return err
		}
	}
	for i := range u.state.Clusters {
		if err := u.acceptAndLabel(ctx, &u.state.Clusters[i]); err != nil {
			return err
		}
	}
	for i := range u.state.Clusters {
		if err := u.waitAvailable(ctx, u.state.Clusters[i].Name); err != nil {
			return err
		}
	}
	return nil
}

// cause replaces an error by what cancelled ctx, if anything did: a
// process that stopped (whose log says more than a failed request to it),
// or the user's interrupt.
func (u *devUp) cause(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if cause := context.Cause(ctx); cause != nil && (errors.Is(err, context.Canceled) || !errors.Is(cause, context.Canceled)) {
		return cause
	}
	return err
}

// watchFrom makes a process that stops once it serves end whatever up
// waits for, with its log as the error.
func (u *devUp) watchFrom(ctx context.Context, stop context.CancelCauseFunc) {
	u.watch = func(p *devProcess) {
		go func() {
			select {
			case <-p.exited:
				stop(p.failure("stopped"))
			case <-ctx.Done():
			}
		}()
	}
}

// cleanUp stops whatever up started, after a failure or an interrupt, and
// removes the directory unless --keep.
func (u *devUp) cleanUp() {
	ps := u.state.running()
	if len(ps) > 0 {
		u.Notef("Stopping the %s that were started...", countNoun(len(ps), "process", "processes"))
	}
	stopProcesses(context.Background(), ps, devStopGrace)
	if u.keep {
		_ = u.state.save(u.dir)
		u.Notef("Kept %s (logs and data); remove it with `%s`", u.dir, flotilla("dev down"+u.dirFlag()))
		return
	}
	if err := os.RemoveAll(u.dir); err != nil {
		u.Notef("Warning: cannot remove %s: %v", u.dir, err)
		return
	}
	u.Notef("Removed %s (keep it for a look at the logs with --keep)", u.dir)
}

// printSummary tells where everything is.
func (u *devUp) printSummary(took time.Duration) error {
	out := u.Streams.Out
	fmt.Fprintf(out, "Flotilla dev environment is up in %s: a hub and %s, in %s.\n\n", took.Round(100*time.Millisecond), countNoun(len(u.state.Clusters), "cluster", "clusters"), u.dir)
	header := []string{"NAME", "URL", "MEMORY", "LABELS"}
	rows := [][]string{{"hub", u.state.Hub.URL, memoryColumn(u.state.Hub.Process), "<none>"}}
	for _, c := range u.state.Clusters {
		rows = append(rows, []string{c.Name, c.URL, memoryColumn(c.Process), cmdutil.LabelsColumn(c.Labels)})
	}
	if err := cmdutil.PrintTable(out, header, rows); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nUse the hub:\n    export KUBECONFIG=%s\n    %s\n", u.state.Hub.Kubeconfig, flotilla("get clusters -o wide"))
	if len(u.state.Clusters) > 0 {
		first := u.state.Clusters[0].Name
		fmt.Fprintf(out, "Reach a cluster through the hub (no port on the cluster):\n    %s && kubectl --kubeconfig %s.kubeconfig get pods -A\n",
			flotilla("kubeconfig --cluster", first, "--output-file", first+".kubeconfig"), first)
	}
	fmt.Fprintf(out, "Use a cluster:\n")
	for _, c := range u.state.Clusters {
		fmt.Fprintf(out, "    export KUBECONFIG=%s\n", c.Kubeconfig)
	}
	fmt.Fprintf(out, "Logs: %s/*.log. Status: %s. Stop everything: %s\n", u.dir, flotilla("dev status"+u.dirFlag()), flotilla("dev down"+u.dirFlag()))
	return nil
}

// countNoun is n with the noun in singular or plural: "1 cluster", "2 clusters".
func countNoun(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// memoryColumn is a process's resident memory, in MiB.
func memoryColumn(p *devProcess) string {
	if p == nil || !p.alive() {
		return "-"
	}
	if rss := p.rss(); rss > 0 {
		return fmt.Sprintf("%dMi", rss>>20)
	}
	return "?"
}
