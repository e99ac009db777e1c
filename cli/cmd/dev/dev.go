package dev

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/cli/cmdutil"
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
	*cmdutil.Globals
	dir string
}

func (o *devOptions) addDirFlag(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.dir, "dir", defaultDevDir(), "directory holding the dev environment: state, logs, kubeconfigs, data")
}

// NewCommand returns `flotilla dev` with up, status, restart and down.
func NewCommand(g *cmdutil.Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run a hub and simulated clusters on this machine, for development",
		Long: `Run a complete Flotilla setup on this machine, without a container engine:
a hub (flotilla-hub), simulated managed clusters (flotilla-dev-cluster: an API
server, controllers, a scheduler and kwok nodes, on which Deployments become
Available though no container runs) and an agent for each cluster, all as
separate processes on 127.0.0.1 that keep running in the background.

"dev up" starts them and joins the clusters (run again, it starts whatever
of them stopped), "dev restart" restarts some or all of them, "dev status"
shows what runs and "dev down" stops everything. Each server picks a free
port itself, so that several environments (each in its own --dir) run side
by side. The binaries flotilla-hub and
flotilla-dev-cluster are taken from the directory of this flotilla
executable, else from PATH.`,
		Example: `  flotilla dev up --clusters 2
  export KUBECONFIG=~/.flotilla/dev/hub/admin.kubeconfig
  flotilla get clusters -o wide
  flotilla dev status
  flotilla dev restart cluster1
  flotilla dev down`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newDevUpCommand(g), newDevStatusCommand(g), newDevRestartCommand(g), newDevDownCommand(g))
	return cmd
}

func newDevUpCommand(g *cmdutil.Globals) *cobra.Command {
	o := &devUpOptions{devOptions: devOptions{Globals: g}}
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

On an environment that came up before, up starts only what of it does not
run (with its data and its port, so that kubeconfigs stay valid), leaves
the rest as it is, and waits until every cluster is Available again. A
piece restarted by hand is recognised by its command line and kept.

If anything fails to come up (a process that stops), up says which, shows
the last lines of its log, stops what it started and removes --dir (keeps
it with --keep). A server that lost its port to another process is started
again, up to 5 times. The processes keep running after up returns: stop
them with "flotilla dev down".`,
		Example: `  # A hub and two clusters in ~/.flotilla/dev:
  flotilla dev up --clusters 2

  # After a reboot, or when a piece stopped: start what is missing.
  flotilla dev up

  # A second environment elsewhere, with bigger nodes:
  flotilla dev up --dir /tmp/fleet --clusters 3 --nodes 5 --node-cpu 16 --node-memory 64Gi`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			o.clustersSet = cmd.Flags().Changed("clusters")
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

func newDevStatusCommand(g *cmdutil.Globals) *cobra.Command {
	o := &devOptions{Globals: g}
	cmd := &cobra.Command{
		Use:   "status [--dir DIR]",
		Short: "Show the processes of the dev environment and whether its clusters are available",
		Long: `Show each process of the dev environment in --dir (whether it runs, its pid,
memory and log file) and, while the hub runs, whether each cluster has joined
and is available on the hub.

Without --dir, status shows the dev environment that the kubeconfig
(--kubeconfig, else KUBECONFIG) belongs to, such as make demo's .demo after
export KUBECONFIG=.demo/hub/admin.kubeconfig; else the one in the default
directory. It says which it shows.`,
		Example: `  flotilla dev status
  flotilla dev status --dir .demo`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.findDir(cmd)
			return o.status(cmd.Context())
		},
	}
	o.addDirFlag(cmd)
	return cmd
}

func newDevRestartCommand(g *cmdutil.Globals) *cobra.Command {
	o := &devUpOptions{devOptions: devOptions{Globals: g}}
	cmd := &cobra.Command{
		Use:   "restart [PIECE...] [--dir DIR]",
		Short: "Restart pieces of the dev environment: hub, clusterN, clusterN-agent, or all",
		Long: `Stop the named pieces of the dev environment in --dir (every piece when none
is named) and start them again with the same data and ports, hub first,
then clusters, then agents; then wait until every cluster is Available.
A piece is "hub", a cluster's name ("cluster1"), or its agent
("cluster1-agent"); "flotilla dev status" lists them.

Without --dir, restart works on the dev environment that the kubeconfig
(--kubeconfig, else KUBECONFIG) belongs to, else on the one in the
default directory, as status does, and says which.`,
		Example: `  flotilla dev restart cluster1-agent
  flotilla dev restart hub
  flotilla dev restart --dir /tmp/fleet`,
		ValidArgsFunction: func(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
			var names []string
			if st, err := loadDevState(o.dir); err == nil {
				for _, p := range st.pieces() {
					names = append(names, p.Name)
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.timeout <= 0 {
				return fmt.Errorf("--timeout %s must be positive", o.timeout)
			}
			o.findDir(cmd)
			return o.restartPieces(cmd.Context(), args)
		},
	}
	o.addDirFlag(cmd)
	cmd.Flags().DurationVar(&o.timeout, "timeout", 5*time.Minute, "how long to wait for everything to come up again")
	return cmd
}

func newDevDownCommand(g *cmdutil.Globals) *cobra.Command {
	o := &devDownOptions{devOptions: devOptions{Globals: g}}
	cmd := &cobra.Command{
		Use:   "down [--dir DIR] [--keep]",
		Short: "Stop the dev environment and remove its directory",
		Long: `Stop every process of the dev environment in --dir: agents first, then the
clusters and the hub. Each gets SIGTERM, and SIGKILL if it has not stopped
after --grace. The processes are found by what they are (a program of
Flotilla whose command line names a path inside --dir), not only by the
pids recorded when they started, so that a piece restarted by hand is
stopped too. down fails, naming them, if any process is left. Then --dir is removed, unless --keep: a later "dev up" on a kept
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
