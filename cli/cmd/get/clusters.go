package get

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
-o json and -o yaml print the ManagedCluster objects.`,
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
	list := &clusterv1.ManagedClusterList{}
	if len(names) == 0 {
		if err := c.Ctrl.List(ctx, list); err != nil {
			return cmdutil.ExplainClusterAPI(err, c, "list ManagedClusters")
		}
	}
	for _, name := range names {
		mc := clusterv1.ManagedCluster{}
		if err := c.Ctrl.Get(ctx, client.ObjectKey{Name: name}, &mc); err != nil {
			if apierrors.IsNotFound(err) {
				return fmt.Errorf("ManagedCluster %q not found on %s (see `flotilla get clusters` for the names)", name, c.Where)
			}
			return cmdutil.ExplainClusterAPI(err, c, "get ManagedCluster "+name)
		}
		list.Items = append(list.Items, mc)
	}
	slices.SortFunc(list.Items, func(a, b clusterv1.ManagedCluster) int { return strings.Compare(a.Name, b.Name) })

	switch o.output {
	case cmdutil.OutputJSON, cmdutil.OutputYAML:
		list.APIVersion, list.Kind = clusterv1.GroupVersion.String(), "ManagedClusterList"
		for i := range list.Items {
			list.Items[i].APIVersion, list.Items[i].Kind = clusterv1.GroupVersion.String(), "ManagedCluster"
			list.Items[i].ManagedFields = nil
		}
		return cmdutil.PrintData(o.Streams.Out, o.output, list)
	}
	if len(list.Items) == 0 {
		o.Notef("No managed clusters yet: run `flotilla init` for the join command.")
		return nil
	}
	header, rows := clusterTable(list.Items, time.Now(), o.output == cmdutil.OutputWide)
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
