package dev

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/flotilla-io/flotilla/cli/cmdutil"
)

// repair brings an environment that came up once back to running: it
// keeps every piece that runs (recorded, or found running as it after a
// restart by hand), starts each missing one with its recorded command
// line (same data, same port), hub first, then clusters, then agents, and
// waits until every cluster is Available again.
func (u *devUp) repair(ctx context.Context) (err error) {
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	defer func() { err = u.cause(ctx, err) }()
	u.watchFrom(ctx, stop)

	adopted, err := u.state.adopt(u.dir)
	if err != nil {
		return err
	}
	for _, name := range adopted {
		u.prog.Report("%s runs as pid %d, started outside flotilla dev: kept, and recorded", name, u.state.piece(name).PID)
	}
	var missing []*devProcess
	for _, p := range u.state.pieces() {
		if !p.alive() {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		u.prog.Report("Every process of the dev environment in %s runs: nothing to start", u.dir)
	} else {
		names := make([]string, len(missing))
		for i, p := range missing {
			names[i] = p.Name
		}
		u.prog.Report("Starting %s in %s; what runs is left as it is", strings.Join(names, ", "), u.dir)
	}
	if err := u.state.save(u.dir); err != nil {
		return err
	}
	for _, p := range missing {
		if err := p.restart(); err != nil {
			return err
		}
		if err := u.state.save(u.dir); err != nil {
			return err
		}
		switch {
		case p == u.state.Hub.Process:
			if _, err := u.serve(ctx, p, hubReadyLine); err != nil {
				return err
			}
			u.prog.Report("Hub: ready at %s", u.state.Hub.URL)
		case strings.HasSuffix(p.Name, "-agent"):
			u.watch(p)
			u.prog.Report("%s: started (pid %d)", p.Name, p.PID)
		default:
			url, err := u.serve(ctx, p, devClusterReadyLine)
			if err != nil {
				return err
			}
			u.prog.Report("Cluster %s: ready at %s", p.Name, url)
		}
	}
	g := &cmdutil.Globals{Streams: u.Streams, Kubeconfig: u.state.Hub.Kubeconfig}
	if u.hub, err = g.ClientsFor(cmdutil.HubSide); err != nil {
		return err
	}
	for _, c := range u.state.Clusters {
		if err := u.waitAvailable(ctx, c.Name); err != nil {
			return err
		}
	}
	if u.state.Ready.IsZero() {
		u.state.Ready = time.Now()
	}
	return u.state.save(u.dir)
}

// restartPieces stops the named pieces of the environment (every piece
// when none is named), whether recorded or started by hand, and starts
// them again as up does.
func (o *devUpOptions) restartPieces(ctx context.Context, names []string) error {
	if err := o.validateDir(); err != nil {
		return err
	}
	st, err := loadDevState(o.dir)
	if errors.Is(err, errNoDevEnv) {
		return fmt.Errorf("no dev environment in %s: start one with `%s`", o.dir, flotilla("dev up"+o.dirFlag()))
	}
	if err != nil {
		return err
	}
	if st.Ready.IsZero() {
		return fmt.Errorf("the dev environment in %s never came up completely: start it afresh with `%s && %s`", o.dir, flotilla("dev down"+o.dirFlag()), flotilla("dev up"+o.dirFlag()))
	}
	var all []string
	for _, p := range st.pieces() {
		all = append(all, p.Name)
	}
	if len(names) == 0 {
		names = all
	}
	for _, n := range names {
		if !slices.Contains(all, n) {
			return fmt.Errorf("the dev environment in %s has no piece %q: it has %s", o.dir, n, strings.Join(all, ", "))
		}
	}
	if _, err := st.adopt(o.dir); err != nil {
		return err
	}
	var agents, servers []*devProcess
	for _, n := range names {
		p := st.piece(n)
		if !p.alive() {
			continue
		}
		if strings.HasSuffix(n, "-agent") {
			agents = append(agents, p)
		} else {
			servers = append(servers, p)
		}
	}
	for _, group := range [][]*devProcess{agents, servers} {
		for _, r := range stopProcesses(ctx, group, devStopGrace) {
			if r.killed {
				o.Notef("Killed %s (pid %d): it did not stop within %s", r.p.Name, r.p.PID, devStopGrace)
			} else {
				o.Notef("Stopped %s (pid %d)", r.p.Name, r.p.PID)
			}
		}
	}
	for _, n := range names {
		if p := st.piece(n); p.alive() {
			return fmt.Errorf("%s (pid %d) did not stop: kill it by hand, then run `%s`", n, p.PID, flotilla("dev up"+o.dirFlag()))
		}
	}
	if err := st.save(o.dir); err != nil {
		return err
	}
	started := time.Now()
	up := &devUp{devUpOptions: o, state: st, prog: cmdutil.NewProgress(o.Streams.ErrOut), deadline: started.Add(o.timeout)}
	if err := up.repair(ctx); err != nil {
		return err
	}
	return up.printSummary(time.Since(started))
}

// validateDir makes --dir absolute.
func (o *devOptions) validateDir() error {
	if o.dir == "" {
		return errors.New("--dir must name a directory")
	}
	abs, err := filepath.Abs(o.dir)
	if err != nil {
		return fmt.Errorf("--dir: %w", err)
	}
	o.dir = abs
	return nil
}
