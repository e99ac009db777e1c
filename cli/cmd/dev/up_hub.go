package dev

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/cli/cmdutil/handshake"
)

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
		u.prog.Wait("Waiting for cluster "+name+" to be available", fmt.Sprintf("%s (see `%s` and %s)", state, flotilla("describe cluster", name, "--kubeconfig", u.state.Hub.Kubeconfig), filepath.Join(u.dir, name+"-agent.log")))
		return false, nil
	})
	if errors.Is(err, cmdutil.ErrTimedOut) {
		return fmt.Errorf("timed out after --timeout %s waiting for cluster %s to be available: %s; see %s", u.timeout, name, state, filepath.Join(u.dir, name+"-agent.log"))
	}
	return err
}
