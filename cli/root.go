package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"
)

// IOStreams are where a command reads its input and writes its output.
type IOStreams struct {
	// In is standard input.
	In io.Reader
	// Out receives results: tables, join commands, JSON and YAML.
	Out io.Writer
	// ErrOut receives progress, notes, warnings and errors.
	ErrOut io.Writer
}

// StdStreams returns the streams of the process.
func StdStreams() IOStreams {
	return IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
}

// Command groups shown in `flotilla --help`.
const (
	groupHub     = "hub"
	groupCluster = "cluster"
)

// globalOptions are the flags every command shares.
type globalOptions struct {
	streams    IOStreams
	kubeconfig string
	context    string
	// webhookWait is how long the command's writes wait for an admission
	// webhook that the API server cannot call (see waitingForWebhook).
	webhookWait time.Duration
}

// Run executes the flotilla command line args (without the program name)
// and returns the process exit code. Errors are printed to streams.ErrOut
// as one message, never with a stack trace.
func Run(ctx context.Context, streams IOStreams, args []string) int {
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
func NewRootCommand(streams IOStreams) *cobra.Command {
	g := &globalOptions{streams: streams}
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
			g.webhookWait = webhookWaitOf(c)
		},
	}
	cmd.SetIn(streams.In)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fmt.Errorf("%w\nSee '%s --help' for the flags.", err, c.CommandPath())
	})
	pf := cmd.PersistentFlags()
	pf.StringVar(&g.kubeconfig, "kubeconfig", "", "kubeconfig file of the hub (hub commands) or of the managed cluster (join, unjoin); default: $KUBECONFIG, then ~/.kube/config")
	pf.StringVar(&g.context, "context", "", "kubeconfig context to use (default: its current context)")
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	verbosity := klogFlags.Lookup("v")
	verbosity.Usage = "log verbosity: 6 shows each API request, 8 also their bodies"
	pf.AddGoFlag(verbosity)

	cmd.AddGroup(
		&cobra.Group{ID: groupHub, Title: "Hub commands (use the hub's admin kubeconfig):"},
		&cobra.Group{ID: groupCluster, Title: "Managed cluster commands (use the cluster's kubeconfig):"},
	)
	for _, sub := range []*cobra.Command{newInitCommand(g), newAcceptCommand(g), newDenyCommand(g), withPolicyGets(g, withPlacementGets(g, newGetCommand(g))), withPolicyCreates(g, withPlacementCreates(g, newCreateCommand(g))), newDeleteCommand(g), newClusterSetCommand(g), newKubeconfigCommand(g), withDescribes(g, withWorkDescribe(g, newDescribeCommand(g)))} {
		sub.GroupID = groupHub
		cmd.AddCommand(sub)
	}
	for _, sub := range []*cobra.Command{newJoinCommand(g), newUnjoinCommand(g)} {
		sub.GroupID = groupCluster
		cmd.AddCommand(sub)
	}
	cmd.AddCommand(newDevCommand(g), newVersionCommand(g), newCredentialPluginCommand(g))
	cmd.AddCommand(newPolicyCommand(g))
	cmd.AddCommand(withGroup(groupHub, newConsoleCommand(g)))
	finishKindVerbs(cmd)
	addExamplesToGenerated(cmd)
	addNameCompletions(g, cmd)
	return cmd
}

// notef writes a progress or status line to standard error.
func (g *globalOptions) notef(format string, args ...any) {
	fmt.Fprintf(g.streams.ErrOut, format+"\n", args...)
}
