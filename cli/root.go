package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/flotilla-io/flotilla/cli/cmd/accept"
	"github.com/flotilla-io/flotilla/cli/cmd/addon"
	"github.com/flotilla-io/flotilla/cli/cmd/clusterset"
	"github.com/flotilla-io/flotilla/cli/cmd/console"
	"github.com/flotilla-io/flotilla/cli/cmd/create"
	"github.com/flotilla-io/flotilla/cli/cmd/credentialplugin"
	deletecmd "github.com/flotilla-io/flotilla/cli/cmd/delete"
	"github.com/flotilla-io/flotilla/cli/cmd/deny"
	"github.com/flotilla-io/flotilla/cli/cmd/describe"
	"github.com/flotilla-io/flotilla/cli/cmd/dev"
	"github.com/flotilla-io/flotilla/cli/cmd/get"
	initcmd "github.com/flotilla-io/flotilla/cli/cmd/init"
	"github.com/flotilla-io/flotilla/cli/cmd/join"
	"github.com/flotilla-io/flotilla/cli/cmd/kubeconfig"
	"github.com/flotilla-io/flotilla/cli/cmd/policy"
	"github.com/flotilla-io/flotilla/cli/cmd/rollout"
	"github.com/flotilla-io/flotilla/cli/cmd/search"
	"github.com/flotilla-io/flotilla/cli/cmd/unjoin"
	"github.com/flotilla-io/flotilla/cli/cmd/version"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
)

// withGroup puts cmd in a help group.
func withGroup(id string, cmd *cobra.Command) *cobra.Command {
	cmd.GroupID = id
	return cmd
}

// Command groups shown in `flotilla --help`.
const (
	groupHub     = "hub"
	groupCluster = "cluster"
)

// Run executes the flotilla command line args (without the program name)
// and returns the process exit code. Errors are printed to streams.ErrOut
// as one message, never with a stack trace.
func Run(ctx context.Context, streams cmdutil.IOStreams, args []string) int {
	cmd := NewRootCommand(streams)
	cmd.SetArgs(args)
	if err := cmd.ExecuteContext(ctx); err != nil {
		if errors.Is(err, context.Canceled) {
			fmt.Fprintln(streams.ErrOut, "Interrupted.")
			return 130
		}
		fmt.Fprintln(streams.ErrOut, "Error:", err)
		return 1
	}
	return 0
}

// NewRootCommand returns the `flotilla` command with every subcommand,
// reading and writing only the given streams.
func NewRootCommand(streams cmdutil.IOStreams) *cobra.Command {
	g := &cmdutil.Globals{Streams: streams}
	cmd := &cobra.Command{
		Use:   "flotilla",
		Short: "Join Kubernetes clusters to a Flotilla hub and manage them",
		Long: `flotilla joins Kubernetes clusters to a Flotilla hub, the pull-mode
multi-cluster manager that speaks the Open Cluster Management (OCM) APIs.

Joining is a double opt-in. On the hub, an administrator creates a join
token; on the cluster, "flotilla join" installs an agent that uses the token
to ask the hub for its own credentials; on the hub again, the administrator
accepts the cluster.

Hub commands use the hub's admin kubeconfig; cluster commands use the
managed cluster's kubeconfig. Both come from --kubeconfig, else $KUBECONFIG,
else ~/.kube/config, exactly as with kubectl.`,
		Example: `  # On the hub: create a join token and print the join command.
  flotilla init --kubeconfig hub.kubeconfig

  # On the cluster to add: join it (paste the command printed by init).
  flotilla join --kubeconfig cluster1.kubeconfig --hub-token <token> \
      --hub-apiserver https://hub.example.com:6443 --cluster-name cluster1

  # On the hub: accept it, and wait until its agent has joined.
  flotilla accept --kubeconfig hub.kubeconfig --clusters cluster1 --wait
  flotilla get clusters --kubeconfig hub.kubeconfig`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRun: func(c *cobra.Command, _ []string) {
			g.WebhookWait = cmdutil.WebhookWaitOf(c)
		},
	}
	cmd.SetIn(streams.In)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fmt.Errorf("%w\nSee '%s --help' for the flags.", err, c.CommandPath())
	})
	pf := cmd.PersistentFlags()
	pf.StringVar(&g.Kubeconfig, "kubeconfig", "", "kubeconfig file of the hub (hub commands) or of the managed cluster (join, unjoin); default: $KUBECONFIG, then ~/.kube/config")
	pf.StringVar(&g.Context, "context", "", "kubeconfig context to use (default: its current context)")
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	verbosity := klogFlags.Lookup("v")
	verbosity.Usage = "log verbosity: 6 shows each API request, 8 also their bodies"
	pf.AddGoFlag(verbosity)

	cmd.AddGroup(
		&cobra.Group{ID: groupHub, Title: "Hub commands (use the hub's admin kubeconfig):"},
		&cobra.Group{ID: groupCluster, Title: "Managed cluster commands (use the cluster's kubeconfig):"},
	)
	for _, sub := range []*cobra.Command{initcmd.NewCommand(g), accept.NewCommand(g), deny.NewCommand(g), get.NewCommand(g), create.NewCommand(g), deletecmd.NewCommand(g), clusterset.NewCommand(g), addon.NewCommand(g), kubeconfig.NewCommand(g), describe.NewCommand(g), rollout.NewCommand(g), search.NewCommand(g)} {
		sub.GroupID = groupHub
		cmd.AddCommand(sub)
	}
	for _, sub := range []*cobra.Command{join.NewCommand(g), unjoin.NewCommand(g)} {
		sub.GroupID = groupCluster
		cmd.AddCommand(sub)
	}
	cmd.AddCommand(dev.NewCommand(g), version.NewCommand(g), credentialplugin.NewCommand(g))
	cmd.AddCommand(policy.NewCommand(g))
	cmd.AddCommand(withGroup(groupHub, console.NewCommand(g)))
	finishKindVerbs(cmd)
	addExamplesToGenerated(cmd)
	cmdutil.AddNameCompletions(g, cmd)
	return cmd
}
