package dev

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/cli/cmdutil/handshake"
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
				o.Notef("Note: the dev environment in %s has %s; --clusters %d applies to a new one (flotilla dev down%s first).",
					o.dir, countNoun(len(st.Clusters), "cluster", "clusters"), o.clusters, o.dirFlag())
			}
			return st, nil
		}
		if running := st.running(); len(running) > 0 {
			return nil, fmt.Errorf("a dev environment that never came up completely still runs in %s (%s): stop it with `flotilla dev down%s`, or choose another --dir",
				o.dir, countNoun(len(running), "process", "processes"), o.dirFlag())
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

// devPortTries is how often a server that failed on a busy port (or a
// data directory still held by the process it replaces) is started again
// before up gives up, devRetryPause apart.
const (
	devPortTries  = 5
	devRetryPause = 2 * time.Second
)

// startServers starts the hub and the dev clusters side by side (each
// takes a few seconds to come up). Each picks a free port itself
// (--secure-port 0), which serve reads back from its ready line: no port
// is reserved here and released for another process to take meanwhile.
func (u *devUp) startServers(bins devBinaries) error {
	hubDir := filepath.Join(u.dir, "hub")
	u.state.Hub.Kubeconfig = filepath.Join(hubDir, "admin.kubeconfig")
	var err error
	u.state.Hub.Process, err = startDetached("hub", bins.hub, filepath.Join(u.dir, "hub.log"),
		"--data-dir", hubDir, "--secure-port", "0",
		"--webhook-port", "0", "--metrics-bind-address", "0", "--health-probe-bind-address", "0", "--leader-elect=false")
	if err != nil {
		return err
	}
	for i := range u.clusters {
		c, err := u.startCluster(bins.cluster, i)
		u.state.Clusters = append(u.state.Clusters, c)
		if err != nil {
			return err
		}
	}
	return u.state.save(u.dir)
}

// serve waits until a server serves and returns the address it printed.
// One that failed on a busy port (its own choice of a free port can lose
// a race, as can a recorded port on a restart) is started again, up to
// devPortTries times. The port is then recorded as the server's, so that
// a restart keeps the address that agents and kubeconfigs know.
func (u *devUp) serve(ctx context.Context, p *devProcess, readyLine string) (string, error) {
	for try := 1; ; try++ {
		err := p.waitForLine(ctx, readyLine, time.Until(u.deadline))
		if err == nil {
			break
		}
		if try >= devPortTries || !p.hasExited() {
			return "", err
		}
		switch {
		case p.addressInUse():
			u.prog.Report("%s: its port was taken by another process; starting it again", p.Name)
		case p.dataDirBusy():
			// A process killed a moment ago holds its data directory until
			// its last thread has ended, though /proc shows it a zombie.
			u.prog.Report("%s: its data directory is still held by the process it replaces; starting it again", p.Name)
		default:
			return "", err
		}
		select {
		case <-ctx.Done():
			return "", context.Cause(ctx)
		case <-time.After(devRetryPause):
		}
		if err := p.restart(); err != nil {
			return "", err
		}
		if err := u.state.save(u.dir); err != nil {
			return "", err
		}
	}
	url, err := p.readyURL(readyLine)
	if err != nil {
		return "", err
	}
	if i := strings.LastIndexByte(url, ':'); i >= 0 {
		p.setArg("--secure-port", url[i+1:])
	}
	u.watch(p)
	return url, u.state.save(u.dir)
}

// startAgent waits until the cluster serves, then joins it to the hub with
// an agent running as `flotilla join --run`.
func (u *devUp) startAgent(ctx context.Context, c *devCluster, flotilla string, join handshake.JoinInfo) error {
	var err error
	if c.URL, err = u.serve(ctx, c.Process, devClusterReadyLine); err != nil {
		return err
	}
	u.prog.Report("Cluster %s: ready at %s with %d nodes in %s", c.Name, c.URL, u.nodes, c.Labels["region"])
	if err := grantHubAdmins(ctx, c.Kubeconfig); err != nil {
		return err
	}
	c.Agent, err = startDetached(c.Name+"-agent", flotilla, filepath.Join(u.dir, c.Name+"-agent.log"),
		"join", "--run", "--kubeconfig", c.Kubeconfig, "--cluster-name", c.Name,
		"--hub-token", join.HubToken, "--hub-apiserver", join.HubAPIServer, "--ca-file", filepath.Join(u.dir, "hub-ca.crt"))
	if err != nil {
		return err
	}
	u.watch(c.Agent)
	return u.state.save(u.dir)
}

// startCluster starts the i-th dev cluster on a port it picks.
func (u *devUp) startCluster(bin string, i int) (devCluster, error) {
	name := devClusterName(i)
	dataDir := filepath.Join(u.dir, name)
	c := devCluster{
		Name:       name,
		Labels:     devClusterLabels(i),
		Kubeconfig: filepath.Join(dataDir, "admin.kubeconfig"),
	}
	region := c.Labels["region"]
	var err error
	c.Process, err = startDetached(name, bin, filepath.Join(u.dir, name+".log"),
		"--name", name, "--data-dir", dataDir, "--secure-port", "0",
		"--nodes", strconv.Itoa(u.nodes), "--node-cpu", u.nodeCPU, "--node-memory", u.nodeMemory,
		"--region", region, "--zone", strings.Join(devZones(region), ","))
	return c, err
}

// initHub does what `flotilla init` does, and returns the join token and
// address. It saves the hub's CA for the agents' --ca-file.
func (u *devUp) initHub(ctx context.Context) (handshake.JoinInfo, error) {
	g := &cmdutil.Globals{Streams: u.Streams, Kubeconfig: u.state.Hub.Kubeconfig}
	c, err := g.ClientsFor(cmdutil.HubSide)
	if err != nil {
		return handshake.JoinInfo{}, err
	}
	u.hub = c
	if err := handshake.CheckIsHub(c); err != nil {
		return handshake.JoinInfo{}, err
	}
	if err := handshake.EnsureClusterInfo(ctx, c, u.state.Hub.URL); err != nil {
		return handshake.JoinInfo{}, err
	}
	if _, err := handshake.EnsureBootstrapRBAC(ctx, c); err != nil {
		return handshake.JoinInfo{}, err
	}
	t, _, err := handshake.EnsureToken(ctx, c, devTokenTTL, false)
	if err != nil {
		return handshake.JoinInfo{}, err
	}
	ca, err := cmdutil.CAData(c.Config)
	if err != nil {
		return handshake.JoinInfo{}, err
	}
	if err := os.WriteFile(filepath.Join(u.dir, "hub-ca.crt"), ca, 0o600); err != nil {
		return handshake.JoinInfo{}, err
	}
	u.prog.Report("Hub: created join token %s", t.ID)
	return handshake.JoinInfo{HubToken: t.String(), HubAPIServer: u.state.Hub.URL}, nil
}

// acceptAndLabel accepts a cluster as `flotilla accept --wait` does, then
// sets its labels on the hub.
func (u *devUp) acceptAndLabel(ctx context.Context, c *devCluster) error {
	accept := &handshake.AcceptOptions{Globals: &cmdutil.Globals{Streams: u.Streams}, Clusters: []string{c.Name}, Wait: true, Timeout: time.Until(u.deadline)}
	if err := accept.AcceptAllAndWait(ctx, u.hub); err != nil {
		return err
	}
	mc := &clusterv1.ManagedCluster{}
	if err := u.hub.Ctrl.Get(ctx, client.ObjectKey{Name: c.Name}, mc); err != nil {
		return cmdutil.ExplainClusterAPI(err, u.hub, "get ManagedCluster "+c.Name)
	}
	orig := mc.DeepCopy()
	if mc.Labels == nil {
		mc.Labels = map[string]string{}
	}
	for k, v := range c.Labels {
		mc.Labels[k] = v
	}
	if err := u.hub.Ctrl.Patch(ctx, mc, client.MergeFrom(orig)); err != nil {
		return cmdutil.Explain(err, u.hub.Where, "label ManagedCluster "+c.Name)
	}
	u.prog.Report("Hub: labelled ManagedCluster %s %s", c.Name, cmdutil.LabelsColumn(c.Labels))
	return nil
}

// waitAvailable waits until the hub reports the cluster Available.
func (u *devUp) waitAvailable(ctx context.Context, name string) error {
	var state string
	err := cmdutil.PollUntil(ctx, u.deadline, func(ctx context.Context) (bool, error) {
		mc := &clusterv1.ManagedCluster{}
		if err := u.hub.Ctrl.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
			return false, cmdutil.ExplainClusterAPI(err, u.hub, "get ManagedCluster "+name)
		}
		cond := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
		if cond != nil && cond.Status == "True" {
			u.prog.Report("Cluster %s is available.", name)
			return true, nil
		}
		state = "its agent has not renewed its lease yet"
		if cond != nil {
			state = fmt.Sprintf("%s is %s: %s", clusterv1.ManagedClusterConditionAvailable, cond.Status, cond.Message)
		}
		u.prog.Wait("Waiting for cluster "+name+" to be available", fmt.Sprintf("%s (see `flotilla describe cluster %s` and %s)", state, name, filepath.Join(u.dir, name+"-agent.log")))
		return false, nil
	})
	if errors.Is(err, cmdutil.ErrTimedOut) {
		return fmt.Errorf("timed out after --timeout %s waiting for cluster %s to be available: %s; see %s", u.timeout, name, state, filepath.Join(u.dir, name+"-agent.log"))
	}
	return err
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
		u.Notef("Kept %s (logs and data); remove it with `flotilla dev down%s`", u.dir, u.dirFlag())
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
	fmt.Fprintf(out, "\nUse the hub:\n    export KUBECONFIG=%s\n    flotilla get clusters -o wide\n", u.state.Hub.Kubeconfig)
	if len(u.state.Clusters) > 0 {
		first := u.state.Clusters[0].Name
		fmt.Fprintf(out, "Reach a cluster through the hub (no port on the cluster):\n    flotilla kubeconfig --cluster %s --output-file %s.kubeconfig && kubectl --kubeconfig %s.kubeconfig get pods -A\n", first, first, first)
	}
	fmt.Fprintf(out, "Use a cluster:\n")
	for _, c := range u.state.Clusters {
		fmt.Fprintf(out, "    export KUBECONFIG=%s\n", c.Kubeconfig)
	}
	fmt.Fprintf(out, "Logs: %s/*.log. Status: flotilla dev status%s. Stop everything: flotilla dev down%s\n", u.dir, u.dirFlag(), u.dirFlag())
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
