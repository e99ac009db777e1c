package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/internal/tunnel"
)

type getClustersOptions struct {
	*globalOptions
	output string
}

func newGetClustersCommand(g *globalOptions) *cobra.Command {
	o := &getClustersOptions{globalOptions: g}
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
		ValidArgsFunction: completeClusterNames(g),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(o.output, outputWide, outputJSON, outputYAML); err != nil {
				return err
			}
			return o.run(cmd.Context(), args)
		},
	}
	addOutputFlag(cmd, &o.output, outputWide, outputJSON, outputYAML)
	return cmd
}

func (o *getClustersOptions) run(ctx context.Context, names []string) error {
	c, err := o.clientsFor(hubSide)
	if err != nil {
		return err
	}
	list := &clusterv1.ManagedClusterList{}
	if len(names) == 0 {
		if err := c.ctrl.List(ctx, list); err != nil {
			return explainClusterAPI(err, c, "list ManagedClusters")
		}
	}
	for _, name := range names {
		mc := clusterv1.ManagedCluster{}
		if err := c.ctrl.Get(ctx, client.ObjectKey{Name: name}, &mc); err != nil {
			if apierrors.IsNotFound(err) {
				return fmt.Errorf("ManagedCluster %q not found on %s (see `flotilla get clusters` for the names)", name, c.where)
			}
			return explainClusterAPI(err, c, "get ManagedCluster "+name)
		}
		list.Items = append(list.Items, mc)
	}
	slices.SortFunc(list.Items, func(a, b clusterv1.ManagedCluster) int { return strings.Compare(a.Name, b.Name) })

	switch o.output {
	case outputJSON, outputYAML:
		list.APIVersion, list.Kind = clusterv1.GroupVersion.String(), "ManagedClusterList"
		for i := range list.Items {
			list.Items[i].APIVersion, list.Items[i].Kind = clusterv1.GroupVersion.String(), "ManagedCluster"
			list.Items[i].ManagedFields = nil
		}
		return printData(o.streams.Out, o.output, list)
	}
	if len(list.Items) == 0 {
		o.notef("No managed clusters yet: run `flotilla init` for the join command.")
		return nil
	}
	header, rows := clusterTable(list.Items, time.Now(), o.output == outputWide)
	return printTable(o.streams.Out, header, rows)
}

// explainClusterAPI is explain, with a hint for an API server that is not a hub.
func explainClusterAPI(err error, c *clients, what string) error {
	if meta.IsNoMatchError(err) {
		return &notHubError{where: c.where, err: err}
	}
	return explain(err, c.where, what)
}

// notHubError is an API server that does not serve ManagedClusters. It
// keeps the error it was told by, so that a --wait can tell a hub that is
// starting again from a server that is no hub.
type notHubError struct {
	where string
	err   error
}

func (e *notHubError) Error() string {
	return fmt.Sprintf("%s does not serve ManagedClusters, so it is not a Flotilla hub: point --kubeconfig at the hub", e.where)
}

func (e *notHubError) Unwrap() error { return e.err }

// clusterTable renders clusters as table rows; wide adds capacity, labels and URL.
func clusterTable(items []clusterv1.ManagedCluster, now time.Time, wide bool) (header []string, rows [][]string) {
	header = []string{"NAME", "ACCEPTED", "JOINED", "AVAILABLE", "KUBERNETES VERSION", "AGE"}
	if wide {
		header = append(header, "TUNNEL", "CPU", "MEMORY", "LABELS", "URL")
	}
	for _, mc := range items {
		row := []string{
			mc.Name,
			boolColumn(mc.Spec.HubAcceptsClient),
			conditionColumn(mc.Status.Conditions, clusterv1.ManagedClusterConditionJoined),
			conditionColumn(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable),
			orNone(mc.Status.Version.Kubernetes),
			ageColumn(mc.CreationTimestamp, now),
		}
		if wide {
			row = append(row,
				conditionColumn(mc.Status.Conditions, tunnel.ConditionConnected),
				quantityColumn(mc.Status.Capacity, clusterv1.ResourceCPU),
				quantityColumn(mc.Status.Capacity, clusterv1.ResourceMemory),
				labelsColumn(mc.Labels),
				urlColumn(mc.Spec.ManagedClusterClientConfigs),
			)
		}
		rows = append(rows, row)
	}
	return header, rows
}

func boolColumn(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// conditionColumn shows a condition's status; Unknown until it is reported.
func conditionColumn(conds []metav1.Condition, t string) string {
	if c := meta.FindStatusCondition(conds, t); c != nil {
		return string(c.Status)
	}
	return string(metav1.ConditionUnknown)
}

func ageColumn(created metav1.Time, now time.Time) string {
	if created.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(created.Time))
}

func quantityColumn(l clusterv1.ResourceList, name clusterv1.ResourceName) string {
	if q, ok := l[name]; ok {
		return q.String()
	}
	return "<none>"
}

func labelsColumn(labels map[string]string) string {
	if len(labels) == 0 {
		return "<none>"
	}
	pairs := make([]string, 0, len(labels))
	for k, v := range labels {
		pairs = append(pairs, k+"="+v)
	}
	slices.Sort(pairs)
	return strings.Join(pairs, ",")
}

func urlColumn(cfgs []clusterv1.ClientConfig) string {
	if len(cfgs) == 0 {
		return "<none>"
	}
	return cfgs[0].URL
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// completeClusterNames completes ManagedCluster names from the hub.
func completeClusterNames(g *globalOptions) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		c, err := g.clientsFor(hubSide)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		list := &clusterv1.ManagedClusterList{}
		if err := c.ctrl.List(cmd.Context(), list); err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		names := make([]string, 0, len(list.Items))
		for _, mc := range list.Items {
			if strings.HasPrefix(mc.Name, toComplete) {
				names = append(names, mc.Name)
			}
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}
