package dev

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
)

type devDownOptions struct {
	devOptions
	keep  bool
	grace time.Duration
}

func (o *devDownOptions) run(ctx context.Context) error {
	dir, err := filepath.Abs(o.dir)
	if err != nil {
		return fmt.Errorf("--dir: %w", err)
	}
	o.dir = dir
	st, err := loadDevState(dir)
	if errors.Is(err, errNoDevEnv) {
		if _, statErr := os.Stat(dir); errors.Is(statErr, os.ErrNotExist) {
			o.Notef("No dev environment in %s: nothing to stop.", dir)
			return nil
		}
		return fmt.Errorf("%s holds no dev environment (no %s): not touching it", dir, devStateFile)
	}
	if err != nil {
		return err
	}
	if _, err := st.adopt(dir); err != nil {
		return err
	}
	running := st.running()
	// Processes of the environment that no record names: stopped too.
	unrecorded, err := sandboxProcesses(dir)
	if err != nil {
		return err
	}
	for _, q := range unrecorded {
		if !slices.ContainsFunc(running, func(p *devProcess) bool { return p.PID == q.PID }) {
			start, _ := procStartTime(q.PID)
			running = append(running, &devProcess{Name: filepath.Base(q.Args[0]), PID: q.PID, StartTime: start, Args: q.Args})
		}
	}
	if len(running) > 0 {
		o.Notef("Stopping %s of the dev environment in %s...", countNoun(len(running), "process", "processes"), dir)
	}
	// Agents first, so that they do not report clusters going away.
	var agents, others []*devProcess
	for _, p := range running {
		if isAgent(st, p) || isAgentCommand(p.Args) {
			agents = append(agents, p)
		} else {
			others = append(others, p)
		}
	}
	for _, group := range [][]*devProcess{agents, others} {
		for _, r := range stopProcesses(ctx, group, o.grace) {
			if r.killed {
				o.Notef("Killed %s (pid %d): it did not stop within --grace %s; see %s", r.p.Name, r.p.PID, o.grace, r.p.Log)
			} else {
				o.Notef("Stopped %s (pid %d)", r.p.Name, r.p.PID)
			}
		}
	}
	left, err := sandboxProcesses(dir)
	if err != nil {
		return err
	}
	for _, p := range st.running() {
		if !slices.ContainsFunc(left, func(q procProcess) bool { return q.PID == p.PID }) {
			left = append(left, procProcess{PID: p.PID, Args: p.Args})
		}
	}
	if len(left) > 0 {
		lines := make([]string, len(left))
		for i, q := range left {
			lines[i] = "  " + q.String()
		}
		return fmt.Errorf("%s of the dev environment in %s did not stop:\n%s\nKill them by hand (kill -9 PID), then run `%s` again; %s is kept until then",
			countNoun(len(left), "process", "processes"), dir, strings.Join(lines, "\n"), flotilla("dev down"+o.dirFlag()), dir)
	}
	if o.keep {
		o.Notef("Kept %s.", dir)
		return nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("cannot remove %s: %w", dir, err)
	}
	o.Notef("Removed %s.", dir)
	return nil
}

func isAgent(st *devState, p *devProcess) bool {
	for _, c := range st.Clusters {
		if c.Agent == p {
			return true
		}
	}
	return false
}

// stopResult is how one process stopped.
type stopResult struct {
	p      *devProcess
	killed bool
}

// stopProcesses stops the processes side by side, each with SIGTERM and,
// after grace, SIGKILL, and returns once all have ended.
func stopProcesses(ctx context.Context, ps []*devProcess, grace time.Duration) []stopResult {
	results := make([]stopResult, len(ps))
	var wg sync.WaitGroup
	for i, p := range ps {
		wg.Go(func() {
			results[i] = stopResult{p: p, killed: p.stop(ctx, grace)}
		})
	}
	wg.Wait()
	return results
}

// status prints the processes of the environment and, while the hub
// runs, what the hub says about each cluster.
func (o *devOptions) status(ctx context.Context) error {
	dir, err := filepath.Abs(o.dir)
	if err != nil {
		return fmt.Errorf("--dir: %w", err)
	}
	o.dir = dir
	st, err := loadDevState(dir)
	if errors.Is(err, errNoDevEnv) {
		o.Notef("No dev environment in %s: start one with `%s`.", dir, flotilla("dev up"+o.dirFlag()))
		return nil
	}
	if err != nil {
		return err
	}
	clusters := o.hubView(ctx, st)

	age := duration.HumanDuration(time.Since(st.Created))
	switch {
	case !st.Ready.IsZero():
		fmt.Fprintf(o.Streams.Out, "Dev environment in %s, up since %s ago.\n\n", dir, age)
	default:
		fmt.Fprintf(o.Streams.Out, "Dev environment in %s, started %s ago, never came up completely.\n\n", dir, age)
	}
	header := []string{"NAME", "PROCESS", "PID", "MEMORY", "JOINED", "AVAILABLE", "URL", "LOG"}
	row := func(p *devProcess, joined, available, url string) []string {
		if p == nil {
			return []string{"-", "not started", "-", "-", joined, available, url, "-"}
		}
		state := "running"
		if !p.alive() {
			state = "stopped"
		}
		return []string{p.Name, state, fmt.Sprint(p.PID), memoryColumn(p), joined, available, url, p.Log}
	}
	rows := [][]string{row(st.Hub.Process, "-", "-", st.Hub.URL)}
	for _, c := range st.Clusters {
		joined, available := "Unknown", "Unknown"
		if mc, ok := clusters[c.Name]; ok {
			joined = cmdutil.ConditionColumn(mc.Status.Conditions, clusterv1.ManagedClusterConditionJoined)
			available = cmdutil.ConditionColumn(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
		}
		rows = append(rows, row(c.Process, joined, available, c.URL))
		rows = append(rows, row(c.Agent, "-", "-", "-"))
	}
	if err := cmdutil.PrintTable(o.Streams.Out, header, rows); err != nil {
		return err
	}
	fmt.Fprintf(o.Streams.Out, "\nHub kubeconfig: %s\n", st.Hub.Kubeconfig)
	return nil
}

// hubView returns the ManagedClusters of the hub by name, or nothing when
// the hub cannot be asked (a note says why).
func (o *devOptions) hubView(ctx context.Context, st *devState) map[string]clusterv1.ManagedCluster {
	if st.Hub.Process == nil || !st.Hub.Process.alive() {
		return nil
	}
	g := &cmdutil.Globals{Streams: o.Streams, Kubeconfig: st.Hub.Kubeconfig}
	c, err := g.ClientsFor(cmdutil.HubSide)
	if err != nil {
		o.Notef("Cannot ask the hub about the clusters: %v", err)
		return nil
	}
	list := &clusterv1.ManagedClusterList{}
	if err := c.Ctrl.List(ctx, list); err != nil {
		o.Notef("Cannot ask the hub about the clusters: %v", cmdutil.ExplainClusterAPI(err, c, "list ManagedClusters"))
		return nil
	}
	out := map[string]clusterv1.ManagedCluster{}
	for _, mc := range list.Items {
		out[mc.Name] = mc
	}
	return out
}
