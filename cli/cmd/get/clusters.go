package get

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/internal/tunnel"
)

type getClustersOptions struct {
	*cmdutil.Globals
	output string
}

func newGetClustersCommand(g *cmdutil.Globals) *cobra.Command {
	o := &getClustersOptions{Globals: g}
	cmd := &cobra.Command{
		Use:     "clusters [NAME...]",
		Aliases: []string{"cluster", "managedclusters", "mcl"},
		Short:   "List the managed clusters of the hub",
		Long: `List the hub's managed clusters, or the named ones, with whether the hub
accepted them (spec.hubAcceptsClient), whether their agent joined
(ManagedClusterJoined), whether they are available
(ManagedClusterConditionAvailable), their Kubernetes version and age.

-o wide adds whether the cluster's tunnel to the hub is open (TunnelConnected:
reach the cluster through the hub with flotilla kubeconfig), CPU and memory
capacity, labels and the cluster's API URL;
-o json and -o yaml print the ManagedCluster objects: the object itself
for one NAME, as kubectl does, else a ManagedClusterList.`,
		Example: `  flotilla get clusters
  flotilla get clusters cluster1 cluster2 -o wide
  flotilla get clusters -o json | jq -r '.items[].metadata.name'`,
		ValidArgsFunction: cmdutil.CompleteClusterNames(g),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckOutput(o.output, cmdutil.OutputWide, cmdutil.OutputJSON, cmdutil.OutputYAML); err != nil {
				return err
			}
			return o.run(cmd.Context(), args)
		},
	}
	cmdutil.AddOutputFlag(cmd, &o.output, cmdutil.OutputWide, cmdutil.OutputJSON, cmdutil.OutputYAML)
	return cmd
}

func (o *getClustersOptions) run(ctx context.Context, names []string) error {
	c, err := o.ClientsFor(cmdutil.HubSide)
	if err != nil {
		return err
	}
	items, err := cmdutil.GetOrList[clusterv1.ManagedCluster](ctx, c, &clusterv1.ManagedClusterList{},
		cmdutil.Lookup{Kind: "ManagedCluster", Names: names, ListCommand: "flotilla get clusters"})
	if err != nil {
		return err
	}
	switch o.output {
	case cmdutil.OutputJSON, cmdutil.OutputYAML:
		gvk := clusterv1.GroupVersion.WithKind("ManagedCluster")
		return cmdutil.PrintFound(o.Streams.Out, o.output, cmdutil.AsFound(items, gvk), cmdutil.ListKind(gvk), len(names) == 1)
	}
	if len(items) == 0 {
		o.Notef("No managed clusters yet: run `flotilla init` for the join command.")
		return nil
	}
	header, rows := clusterTable(items, time.Now(), o.output == cmdutil.OutputWide)
	return cmdutil.PrintTable(o.Streams.Out, header, rows)
}

// clusterTable renders clusters as table rows; wide adds capacity, labels and URL.
func clusterTable(items []clusterv1.ManagedCluster, now time.Time, wide bool) (header []string, rows [][]string) {
	header = []string{"NAME", "ACCEPTED", "JOINED", "AVAILABLE", "KUBERNETES VERSION", "AGE"}
	if wide {
		header = append(header, "TUNNEL", "CPU", "MEMORY", "LABELS", "URL")
	}
	for _, mc := range items {
		row := []string{
			mc.Name,
			cmdutil.BoolColumn(mc.Spec.HubAcceptsClient),
			cmdutil.ConditionColumn(mc.Status.Conditions, clusterv1.ManagedClusterConditionJoined),
			cmdutil.ConditionColumn(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable),
			cmdutil.OrNone(mc.Status.Version.Kubernetes),
			cmdutil.AgeColumn(mc.CreationTimestamp, now),
		}
		if wide {
			row = append(row,
				cmdutil.ConditionColumn(mc.Status.Conditions, tunnel.ConditionConnected),
				cmdutil.QuantityColumn(mc.Status.Capacity, clusterv1.ResourceCPU),
				cmdutil.QuantityColumn(mc.Status.Capacity, clusterv1.ResourceMemory),
				cmdutil.LabelsColumn(mc.Labels),
				cmdutil.URLColumn(mc.Spec.ManagedClusterClientConfigs),
			)
		}
		rows = append(rows, row)
	}
	return header, rows
}
