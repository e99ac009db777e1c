package get

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
)

type getPlacementsOptions struct {
	*cmdutil.Globals
	namespace string
	output    string
}

func newGetPlacementsCommand(g *cmdutil.Globals) *cobra.Command {
	o := &getPlacementsOptions{Globals: g}
	cmd := &cobra.Command{
		Use:     "placements [NAME] [-n NAMESPACE]",
		Aliases: []string{"placement"},
		Short:   "Show Placements and the clusters they chose",
		Long: `Show the Placements of a namespace (-n), or of every namespace, or only the
one named NAME: how many clusters each chose (of how many asked for),
whether that is all it asked for (PlacementSatisfied), the chosen clusters
(the first few; -o wide lists all, with the decision groups), and the hub's
message, which says why fewer clusters were chosen than asked for, or what
to fix in a misconfigured placement.

-o json and -o yaml print the Placement objects.`,
		Example: `  flotilla get placements -n apps
  flotilla get placements web -n apps -o wide
  flotilla get placements -o yaml`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return fmt.Errorf("name at most one Placement (got %d): flotilla get placements [NAME] [-n NAMESPACE]", len(args))
			}
			if len(args) == 1 && o.namespace == "" {
				return fmt.Errorf("say which namespace Placement %s is in: flotilla get placements %s -n NAMESPACE", args[0], args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckOutput(o.output, cmdutil.OutputWide, cmdutil.OutputJSON, cmdutil.OutputYAML); err != nil {
				return err
			}
			var name string
			if len(args) == 1 {
				name = args[0]
			}
			return o.run(cmd.Context(), name)
		},
	}
	cmd.Flags().StringVarP(&o.namespace, "namespace", "n", "", "the namespace whose Placements to show (default: every namespace)")
	cmdutil.AddOutputFlag(cmd, &o.output, cmdutil.OutputWide, cmdutil.OutputJSON, cmdutil.OutputYAML)
	return cmd
}

func (o *getPlacementsOptions) run(ctx context.Context, name string) error {
	c, err := o.ClientsFor(cmdutil.HubSide)
	if err != nil {
		return err
	}
	list := &clusterv1beta1.PlacementList{}
	if name != "" {
		p := clusterv1beta1.Placement{}
		if err := c.Ctrl.Get(ctx, client.ObjectKey{Namespace: o.namespace, Name: name}, &p); err != nil {
			if apierrors.IsNotFound(err) {
				return fmt.Errorf("Placement %s not found in namespace %s (see `flotilla get placements -n %s`)", name, o.namespace, o.namespace)
			}
			return cmdutil.ExplainClusterAPI(err, c, "get Placement "+o.namespace+"/"+name)
		}
		list.Items = append(list.Items, p)
	} else {
		var opts []client.ListOption
		if o.namespace != "" {
			opts = append(opts, client.InNamespace(o.namespace))
		}
		if err := c.Ctrl.List(ctx, list, opts...); err != nil {
			return cmdutil.ExplainClusterAPI(err, c, "list Placements")
		}
	}
	slices.SortFunc(list.Items, func(a, b clusterv1beta1.Placement) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})

	switch o.output {
	case cmdutil.OutputJSON, cmdutil.OutputYAML:
		list.APIVersion, list.Kind = clusterv1beta1.GroupVersion.String(), "PlacementList"
		list.ResourceVersion, list.Continue = "", ""
		for i := range list.Items {
			list.Items[i].APIVersion, list.Items[i].Kind = clusterv1beta1.GroupVersion.String(), "Placement"
			list.Items[i].ManagedFields = nil
		}
		return cmdutil.PrintData(o.Streams.Out, o.output, list)
	}
	if len(list.Items) == 0 {
		if o.namespace != "" {
			o.Notef("No Placements in namespace %s: create one with `flotilla create placement NAME -n %s`.", o.namespace, o.namespace)
		} else {
			o.Notef("No Placements yet: create one with `flotilla create placement NAME -n NAMESPACE`.")
		}
		return nil
	}
	chosen := make([][]string, len(list.Items))
	for i := range list.Items {
		if chosen[i], err = cmdutil.PlacementClusters(ctx, c, &list.Items[i]); err != nil {
			return err
		}
	}
	header, rows := placementTable(list.Items, chosen, time.Now(), o.output == cmdutil.OutputWide, o.namespace == "")
	return cmdutil.PrintTable(o.Streams.Out, header, rows)
}

// placementTable renders placements as table rows; wide names every chosen
// cluster and the decision groups.
func placementTable(items []clusterv1beta1.Placement, chosen [][]string, now time.Time, wide, allNamespaces bool) (header []string, rows [][]string) {
	header = []string{"NAME", "SELECTED", "SATISFIED", "CLUSTERS", "AGE", "MESSAGE"}
	if wide {
		header = []string{"NAME", "SELECTED", "SATISFIED", "CLUSTERS", "GROUPS", "AGE", "MESSAGE"}
	}
	if allNamespaces {
		header = append([]string{"NAMESPACE"}, header...)
	}
	for i := range items {
		p := &items[i]
		selected := strconv.Itoa(len(chosen[i]))
		if p.Spec.NumberOfClusters != nil {
			selected += "/" + strconv.Itoa(int(*p.Spec.NumberOfClusters))
		}
		row := []string{p.Name, selected, cmdutil.ConditionColumn(p.Status.Conditions, clusterv1beta1.PlacementConditionSatisfied), membersColumn(chosen[i], wide)}
		if wide {
			row = append(row, cmdutil.GroupsColumn(p.Status.DecisionGroups))
		}
		row = append(row, cmdutil.AgeColumn(p.CreationTimestamp, now), cmdutil.PlacementMessage(p))
		if allNamespaces {
			row = append([]string{p.Namespace}, row...)
		}
		rows = append(rows, row)
	}
	return header, rows
}
