package get

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

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

-o json and -o yaml print the Placement objects: the object itself for a
NAME, as kubectl does, else a PlacementList.`,
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
	var names []string
	if name != "" {
		names = []string{name}
	}
	items, err := cmdutil.GetOrList[clusterv1beta1.Placement](ctx, c, &clusterv1beta1.PlacementList{},
		cmdutil.Lookup{Kind: "Placement", Namespace: o.namespace, Names: names, ListCommand: "flotilla get placements"})
	if err != nil {
		return err
	}
	switch o.output {
	case cmdutil.OutputJSON, cmdutil.OutputYAML:
		gvk := clusterv1beta1.GroupVersion.WithKind("Placement")
		return cmdutil.PrintFound(o.Streams.Out, o.output, cmdutil.AsFound(items, gvk), cmdutil.ListKind(gvk), name != "")
	}
	if len(items) == 0 {
		if o.namespace != "" {
			o.Notef("No Placements in namespace %s: create one with `flotilla create placement NAME -n %s`.", o.namespace, o.namespace)
		} else {
			o.Notef("No Placements yet: create one with `flotilla create placement NAME -n NAMESPACE`.")
		}
		return nil
	}
	chosen := make([][]string, len(items))
	for i := range items {
		if chosen[i], err = cmdutil.PlacementClusters(ctx, c, &items[i]); err != nil {
			return err
		}
	}
	header, rows := placementTable(items, chosen, time.Now(), o.output == cmdutil.OutputWide, o.namespace == "")
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
