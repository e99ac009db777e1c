package describe

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/hub/clusterset"
)

func newDescribeClusterSetCommand(g *cmdutil.Globals) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "clusterset NAME",
		Aliases: []string{"clustersets", "managedclusterset", "mclset"},
		Short:   "Show a cluster set: how it selects its members, the members, and the namespaces it is bound to",
		Long: `Show ManagedClusterSet NAME: how it selects its members (the clusterset
label, or a label selector), which clusters are members, which namespaces
it is bound to (their Placements may choose from it), and its conditions.

-o json and -o yaml print the ManagedClusterSet object.`,
		Example: `  flotilla describe clusterset default
  flotilla describe clusterset prod -o yaml`,
		Args:              exactlyOneName("ManagedClusterSet", "flotilla describe clusterset NAME"),
		ValidArgsFunction: cmdutil.CompleteObjectNames(g, func() client.ObjectList { return &clusterv1beta2.ManagedClusterSetList{} }, nil),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckOutput(output, cmdutil.OutputJSON, cmdutil.OutputYAML); err != nil {
				return err
			}
			c, err := g.ClientsFor(cmdutil.HubSide)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			set := &clusterv1beta2.ManagedClusterSet{}
			printed, err := getToDescribe(ctx, c, g.Streams.Out, output, set, clusterv1beta2.GroupVersion.WithKind("ManagedClusterSet"), args[0],
				fmt.Sprintf("ManagedClusterSet %s not found (see `flotilla get clustersets` for the names)", args[0]))
			if printed || err != nil {
				return err
			}
			bindings := &clusterv1beta2.ManagedClusterSetBindingList{}
			if err := c.Ctrl.List(ctx, bindings); err != nil {
				return cmdutil.ExplainClusterAPI(err, c, "list ManagedClusterSetBindings")
			}
			clusters := &clusterv1.ManagedClusterList{}
			if err := c.Ctrl.List(ctx, clusters); err != nil {
				return cmdutil.ExplainClusterAPI(err, c, "list ManagedClusters")
			}
			return writeClusterSetDescription(g.Streams.Out, set, bindings.Items, clusters.Items, time.Now())
		},
	}
	cmdutil.AddOutputFlag(cmd, &output, cmdutil.OutputJSON, cmdutil.OutputYAML)
	return cmd
}

// writeClusterSetDescription writes what `describe clusterset` shows.
func writeClusterSetDescription(w io.Writer, set *clusterv1beta2.ManagedClusterSet, bindings []clusterv1beta2.ManagedClusterSetBinding, clusters []clusterv1.ManagedCluster, now time.Time) error {
	sel, selErr := clusterset.Selector(set)
	var members, namespaces []string
	if selErr == nil {
		for _, mc := range clusters {
			if sel.Matches(labels.Set(mc.Labels)) {
				members = append(members, mc.Name)
			}
		}
	}
	for _, b := range bindings {
		if b.Spec.ClusterSet == set.Name {
			namespaces = append(namespaces, b.Namespace)
		}
	}
	slices.Sort(members)
	slices.Sort(namespaces)
	fmt.Fprintf(w, "Name:         %s\nSelector:     %s\nAge:          %s\n", set.Name, cmdutil.SelectorColumn(set, selErr), cmdutil.AgeColumn(set.CreationTimestamp, now))
	if selErr != nil {
		fmt.Fprintf(w, "Invalid:      %v\n", selErr)
	}
	fmt.Fprintf(w, "Members:      %s\n", cmdutil.OrNone(strings.Join(members, ", ")))
	fmt.Fprintf(w, "Bound to:     %s\n", cmdutil.OrNone(strings.Join(namespaces, ", ")))
	if len(namespaces) == 0 {
		fmt.Fprintf(w, "              (no Placement may choose from it until it is bound: flotilla clusterset bind %s -n NAMESPACE)\n", set.Name)
	}
	return writeConditions(w, set.Status.Conditions, "(none yet)")
}
