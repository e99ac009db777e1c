package dev

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/flotilla-io/flotilla/cli/cmdutil/handshake"
)

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
