package describe

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/cli/cmdutil/workview"
)

func newDescribeClusterCommand(g *cmdutil.Globals) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "cluster NAME",
		Aliases: []string{"clusters", "managedcluster", "mcl"},
		Short:   "Show a managed cluster: whether it is accepted and joined, its conditions, labels, capacity and ManifestWorks",
		Long: `Show ManagedCluster NAME: whether the hub accepts it and its agent joined,
its conditions with their messages, its labels and cluster set, its
Kubernetes version, capacity and API URL, and its ManifestWorks with
whether they are applied and available.

-o json and -o yaml print the ManagedCluster object.`,
		Example: `  flotilla describe cluster cluster1
  flotilla describe cluster cluster1 -o yaml`,
		Args:              exactlyOneName("ManagedCluster", "flotilla describe cluster NAME"),
		ValidArgsFunction: cmdutil.CompleteClusterNames(g),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckOutput(output, cmdutil.OutputJSON, cmdutil.OutputYAML); err != nil {
				return err
			}
			c, err := g.ClientsFor(cmdutil.HubSide)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			mc := &clusterv1.ManagedCluster{}
			printed, err := getToDescribe(ctx, c, g.Streams.Out, output, mc, clusterv1.GroupVersion.WithKind("ManagedCluster"), args[0],
				fmt.Sprintf("cluster %s does not exist on the hub (see `flotilla get clusters` for the names)", args[0]))
			if printed || err != nil {
				return err
			}
			works := &workv1.ManifestWorkList{}
			if err := c.Ctrl.List(ctx, works, client.InNamespace(mc.Name)); err != nil {
				return cmdutil.ExplainClusterAPI(err, c, "list the ManifestWorks of cluster "+mc.Name)
			}
			return writeClusterDescription(g.Streams.Out, mc, works.Items, time.Now())
		},
	}
	cmdutil.AddOutputFlag(cmd, &output, cmdutil.OutputJSON, cmdutil.OutputYAML)
	return cmd
}

// writeClusterDescription writes what `describe cluster` shows.
func writeClusterDescription(w io.Writer, mc *clusterv1.ManagedCluster, works []workv1.ManifestWork, now time.Time) error {
	fmt.Fprintf(w, "Name:         %s\nAccepted:     %s\nJoined:       %s\nAvailable:    %s\nKubernetes:   %s\nAge:          %s\n",
		mc.Name, cmdutil.BoolColumn(mc.Spec.HubAcceptsClient),
		cmdutil.ConditionColumn(mc.Status.Conditions, clusterv1.ManagedClusterConditionJoined),
		cmdutil.ConditionColumn(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable),
		cmdutil.OrNone(mc.Status.Version.Kubernetes), cmdutil.AgeColumn(mc.CreationTimestamp, now))
	fmt.Fprintf(w, "Cluster set:  %s\nLabels:       %s\nCapacity:     cpu %s, memory %s\nURL:          %s\n",
		cmdutil.OrNone(mc.Labels[clusterv1.ClusterSetLabel]), cmdutil.LabelsColumn(mc.Labels),
		cmdutil.QuantityColumn(mc.Status.Capacity, clusterv1.ResourceCPU), cmdutil.QuantityColumn(mc.Status.Capacity, clusterv1.ResourceMemory),
		cmdutil.URLColumn(mc.Spec.ManagedClusterClientConfigs))
	if !mc.Spec.HubAcceptsClient {
		fmt.Fprintf(w, "              (not accepted: accept it with `flotilla accept --clusters %s`)\n", mc.Name)
	}
	if err := writeConditions(w, mc.Status.Conditions, "(none yet: its agent has not reported)"); err != nil {
		return err
	}
	fmt.Fprintln(w, "ManifestWorks:")
	if len(works) == 0 {
		fmt.Fprintf(w, "  (none: create one with `flotilla create work NAME -f FILE --clusters %s`)\n", mc.Name)
		return nil
	}
	slices.SortFunc(works, func(a, b workv1.ManifestWork) int { return strings.Compare(a.Name, b.Name) })
	rows := make([][]string, 0, len(works))
	for _, mw := range works {
		rows = append(rows, []string{"  " + mw.Name, workview.WorkConditionColumn(mw.Status.Conditions, workv1.WorkApplied),
			workview.WorkConditionColumn(mw.Status.Conditions, workv1.WorkAvailable), workview.WorkConditionColumn(mw.Status.Conditions, workv1.WorkDegraded),
			cmdutil.AgeColumn(mw.CreationTimestamp, now)})
	}
	return cmdutil.PrintTable(w, []string{"  NAME", "APPLIED", "AVAILABLE", "DEGRADED", "AGE"}, rows)
}
