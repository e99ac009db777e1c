package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
)

// Binaries that `flotilla dev` starts, besides flotilla itself.
const (
	hubBinary        = "flotilla-hub"
	devClusterBinary = "flotilla-dev-cluster"
)

// Lines that the binaries print once they serve.
const (
	hubReadyLine        = "flotilla-hub is ready at"
	devClusterReadyLine = "flotilla-dev-cluster is ready at"
)

// maxDevClusters bounds --clusters: each dev cluster takes about 350 MiB.
const maxDevClusters = 20

// devOptions are the flags every dev subcommand shares.
type devOptions struct {
	*globalOptions
	dir string
}

func (o *devOptions) addDirFlag(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.dir, "dir", defaultDevDir(), "directory holding the dev environment: state, logs, kubeconfigs, data")
}

func newDevCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run a hub and simulated clusters on this machine, for development",
		Long: `Run a complete Flotilla setup on this machine, without a container engine:
a hub (flotilla-hub), simulated managed clusters (flotilla-dev-cluster: an API
server, controllers, a scheduler and kwok nodes, on which Deployments become
Available though no container runs) and an agent for each cluster, all as
separate processes on 127.0.0.1 that keep running in the background.

"dev up" starts them and joins the clusters, "dev status" shows what runs and
"dev down" stops everything. The binaries flotilla-hub and
flotilla-dev-cluster are taken from the directory of this flotilla
executable, else from PATH.`,
		Example: `  flotilla dev up --clusters 2
  export KUBECONFIG=~/.flotilla/dev/hub/admin.kubeconfig
  flotilla get clusters -o wide
  flotilla dev status
  flotilla dev down`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newDevUpCommand(g), newDevStatusCommand(g), newDevDownCommand(g))
	return cmd
}

func newDevUpCommand(g *globalOptions) *cobra.Command {
	o := &devUpOptions{devOptions: devOptions{globalOptions: g}}
	cmd := &cobra.Command{
		Use:   "up [--clusters N] [--dir DIR]",
		Short: "Start a hub and N simulated clusters, and join the clusters to the hub",
		Long: `Start a dev environment in --dir: a hub, --clusters simulated clusters named
cluster1, cluster2, ... and one agent per cluster (flotilla join --run), each a
separate process whose output goes to a log file in --dir.

up then does what an administrator would: flotilla init on the hub, join on
each cluster, accept on the hub, and labels the ManagedClusters with region
(us-east, eu-west, ap-south in turn) and env (prod, dev in turn); the
simulated nodes carry the same region. It returns once every cluster is
Available on the hub, and prints the kubeconfigs to use.

If anything fails to come up (a busy port, a process that stops), up says
which, shows the last lines of its log, stops what it started and removes
--dir (keeps it with --keep). The processes keep running after up returns:
stop them with "flotilla dev down".`,
		Example: `  # A hub and two clusters in ~/.flotilla/dev:
  flotilla dev up --clusters 2

  # A second environment elsewhere, with bigger nodes:
  flotilla dev up --dir /tmp/fleet --clusters 3 --nodes 5 --node-cpu 16 --node-memory 64Gi`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(cmd.Context())
		},
	}
	o.addDirFlag(cmd)
	f := cmd.Flags()
	f.IntVar(&o.clusters, "clusters", 2, fmt.Sprintf("number of managed clusters (1 to %d)", maxDevClusters))
	f.IntVar(&o.nodes, "nodes", 3, "simulated nodes per cluster")
	f.StringVar(&o.nodeCPU, "node-cpu", "8", "CPU capacity of each node")
	f.StringVar(&o.nodeMemory, "node-memory", "32Gi", "memory capacity of each node")
	f.DurationVar(&o.timeout, "timeout", 5*time.Minute, "how long to wait for everything to come up")
	f.BoolVar(&o.keep, "keep", false, "keep --dir (logs, data) when up fails")
	return cmd
}

func newDevStatusCommand(g *globalOptions) *cobra.Command {
	o := &devOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "status [--dir DIR]",
		Short: "Show the processes of the dev environment and whether its clusters are available",
		Long: `Show each process of the dev environment in --dir (whether it runs, its pid,
memory and log file) and, while the hub runs, whether each cluster has joined
and is available on the hub.`,
		Example: `  flotilla dev status`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.status(cmd.Context())
		},
	}
	o.addDirFlag(cmd)
	return cmd
}

func newDevDownCommand(g *globalOptions) *cobra.Command {
	o := &devDownOptions{devOptions: devOptions{globalOptions: g}}
	cmd := &cobra.Command{
		Use:   "down [--dir DIR] [--keep]",
		Short: "Stop the dev environment and remove its directory",
		Long: `Stop every process of the dev environment in --dir: agents first, then the
clusters and the hub. Each gets SIGTERM, and SIGKILL if it has not stopped
after --grace. Then --dir is removed, unless --keep: a later "dev up" on a kept
directory starts afresh.`,
		Example: `  flotilla dev down
  flotilla dev down --keep   # keep the logs`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.grace <= 0 {
				return fmt.Errorf("--grace %s must be positive", o.grace)
			}
			return o.run(cmd.Context())
		},
	}
	o.addDirFlag(cmd)
	cmd.Flags().BoolVar(&o.keep, "keep", false, "keep the directory (logs, data) after stopping")
	cmd.Flags().DurationVar(&o.grace, "grace", 60*time.Second, "how long each process may take to stop after SIGTERM before it is killed")
	return cmd
}
