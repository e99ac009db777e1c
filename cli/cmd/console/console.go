package console

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/cli/cmdutil/handshake"
	"github.com/flotilla-io/flotilla/cli/console"
)

// NewCommand returns `flotilla console`.
func NewCommand(g *cmdutil.Globals) *cobra.Command {
	var port int
	cmd := &cobra.Command{
		Use:   "console [--port N]",
		Short: "Serve a web console of the hub on 127.0.0.1, with your own hub credentials",
		Long: `Serve a web console of the hub on 127.0.0.1: the fleet, each cluster's
works (with per-manifest state, feedback and drift), policies and events,
the rollouts of ManifestWorkReplicaSets, placements (and why a cluster was
not chosen) and the governance matrix. Everything updates live from the
hub's watches.

The console reads and writes with your kubeconfig's credentials, so it
shows exactly what your hub RBAC lets you see, and its actions (accept or
deny a cluster, pause or resume a rollout, switch a policy between inform
and enforce) are allowed or refused by the hub as the same command would
be; each action shows its equivalent command, and deny asks first.

It prints a URL with a one-time secret: the first browser to open it gets a
session cookie, and every other request is refused. Nothing is loaded from
the network; the console listens on 127.0.0.1 only. See docs/console.md.`,
		Example: `  # Serve the console of the hub in hub.kubeconfig on http://127.0.0.1:7080.
  flotilla console --kubeconfig hub.kubeconfig

  # On another port (0 picks a free one).
  flotilla console --port 0`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if port < 0 || port > 65535 {
				return fmt.Errorf("--port %d: want 0-65535", port)
			}
			c, err := g.ClientsFor(cmdutil.HubSide)
			if err != nil {
				return err
			}
			hub := cmdutil.ServerURL(c.Config)
			if g.Context != "" {
				hub += " (context " + g.Context + ")"
			}
			return console.Run(cmd.Context(), console.Options{
				Config:  c.Config,
				Scheme:  cmdutil.Scheme,
				Port:    port,
				Hub:     hub,
				Actions: &consoleActions{g: g, c: c},
				Out:     g.Streams.Out,
				Notef:   g.Notef,
			})
		},
	}
	cmd.Flags().IntVar(&port, "port", 7080, "port on 127.0.0.1 to serve the console on; 0 picks a free one")
	return cmd
}

// consoleActions does the console's accept and deny as the commands do.
type consoleActions struct {
	g *cmdutil.Globals
	c *cmdutil.Clients
}

func (a *consoleActions) Accept(ctx context.Context, cluster string) error {
	if err := cmdutil.ValidateClusterName(cluster); err != nil {
		return err
	}
	o := &handshake.AcceptOptions{Globals: a.g, Clusters: []string{cluster}}
	pass, err := o.AcceptOnce(ctx, a.c, cluster)
	if err != nil {
		return err
	}
	return pass.Verdict()
}

func (a *consoleActions) Deny(ctx context.Context, cluster string) error {
	mc := &clusterv1.ManagedCluster{}
	if err := a.c.Ctrl.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
		return cmdutil.ExplainClusterAPI(err, a.c, "get ManagedCluster "+cluster)
	}
	if !mc.Spec.HubAcceptsClient {
		return nil
	}
	return handshake.SetHubAcceptsClient(ctx, a.c, mc, false)
}
