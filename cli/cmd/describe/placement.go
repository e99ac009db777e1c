package describe

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
)

func newDescribePlacementCommand(g *cmdutil.Globals) *cobra.Command {
	var namespace, output string
	cmd := &cobra.Command{
		Use:     "placement NAME -n NAMESPACE",
		Aliases: []string{"placements"},
		Short:   "Show a Placement: what it asks for, the clusters it chose, its decision groups and conditions",
		Long: `Show Placement NAME of NAMESPACE: the cluster sets it chooses from, how
many clusters it asks for and by which predicates, the clusters it chose
(each with whether it is available), its decision groups, and its
conditions, whose messages say why fewer clusters were chosen than asked
for, or what to fix in a misconfigured placement.

-o json and -o yaml print the Placement object.`,
		Example: `  flotilla describe placement web -n apps
  flotilla describe placement web -n apps -o yaml`,
		Args: func(cmd *cobra.Command, args []string) error {
			if err := exactlyOneName("Placement", "flotilla describe placement NAME -n NAMESPACE")(cmd, args); err != nil {
				return err
			}
			if namespace == "" {
				return fmt.Errorf("say which namespace Placement %s is in: flotilla describe placement %s -n NAMESPACE", args[0], args[0])
			}
			return nil
		},
		ValidArgsFunction: cmdutil.CompleteObjectNames(g, func() client.ObjectList { return &clusterv1beta1.PlacementList{} }, &namespace),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckOutput(output, cmdutil.OutputJSON, cmdutil.OutputYAML); err != nil {
				return err
			}
			c, err := g.ClientsFor(cmdutil.HubSide)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			p := &clusterv1beta1.Placement{}
			if err := c.Ctrl.Get(ctx, client.ObjectKey{Namespace: namespace, Name: args[0]}, p); err != nil {
				if apierrors.IsNotFound(err) {
					return fmt.Errorf("Placement %s not found in namespace %s (see `flotilla get placements -n %s`)", args[0], namespace, namespace)
				}
				return cmdutil.ExplainClusterAPI(err, c, "get Placement "+namespace+"/"+args[0])
			}
			if output != cmdutil.OutputText {
				p.APIVersion, p.Kind, p.ManagedFields = clusterv1beta1.GroupVersion.String(), "Placement", nil
				return cmdutil.PrintData(g.Streams.Out, output, p)
			}
			chosen, err := cmdutil.PlacementClusters(ctx, c, p)
			if err != nil {
				return err
			}
			clusters := &clusterv1.ManagedClusterList{}
			if err := c.Ctrl.List(ctx, clusters); err != nil {
				return cmdutil.ExplainClusterAPI(err, c, "list ManagedClusters")
			}
			return writePlacementDescription(g.Streams.Out, p, chosen, clusters.Items, time.Now())
		},
	}
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "", "the namespace of the Placement")
	cmdutil.AddOutputFlag(cmd, &output, cmdutil.OutputJSON, cmdutil.OutputYAML)
	return cmd
}

// writePlacementDescription writes what `describe placement` shows.
func writePlacementDescription(w io.Writer, p *clusterv1beta1.Placement, chosen []string, clusters []clusterv1.ManagedCluster, now time.Time) error {
	asked := "every matching cluster"
	if p.Spec.NumberOfClusters != nil {
		asked = cmdutil.Plural(int(*p.Spec.NumberOfClusters), "cluster")
	}
	sets := "every set bound to " + p.Namespace
	if len(p.Spec.ClusterSets) > 0 {
		sets = strings.Join(p.Spec.ClusterSets, ", ")
	}
	fmt.Fprintf(w, "Name:         %s\nNamespace:    %s\nCluster sets: %s\nAsks for:     %s\nAge:          %s\n",
		p.Name, p.Namespace, sets, asked, cmdutil.AgeColumn(p.CreationTimestamp, now))
	for i, pred := range p.Spec.Predicates {
		sel := pred.RequiredClusterSelector
		var parts []string
		if s := metav1.FormatLabelSelector(&sel.LabelSelector); s != "<none>" {
			parts = append(parts, "labels "+s)
		}
		if len(sel.ClaimSelector.MatchExpressions) > 0 {
			parts = append(parts, cmdutil.Plural(len(sel.ClaimSelector.MatchExpressions), "claim expression"))
		}
		if n := len(sel.CelSelector.CelExpressions); n > 0 {
			parts = append(parts, cmdutil.Plural(n, "CEL expression"))
		}
		fmt.Fprintf(w, "Predicate %d:  %s\n", i+1, cmdutil.OrNone(strings.Join(parts, "; ")))
	}
	fmt.Fprintf(w, "Groups:       %s\nMessage:      %s\n", cmdutil.GroupsColumn(p.Status.DecisionGroups), cmdutil.PlacementMessage(p))
	if err := writeConditions(w, p.Status.Conditions, "(none yet: is the hub's placement controller running?)"); err != nil {
		return err
	}
	fmt.Fprintln(w, "Chosen clusters:")
	if len(chosen) == 0 {
		fmt.Fprintln(w, "  (none)")
		return nil
	}
	rows := make([][]string, 0, len(chosen))
	for _, name := range chosen {
		available := "<unknown cluster>"
		if i := slices.IndexFunc(clusters, func(mc clusterv1.ManagedCluster) bool { return mc.Name == name }); i >= 0 {
			available = cmdutil.ConditionColumn(clusters[i].Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
		}
		rows = append(rows, []string{"  " + name, available})
	}
	return cmdutil.PrintTable(w, []string{"  CLUSTER", "AVAILABLE"}, rows)
}
