package get

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/hub/clusterset"
)

type getClusterSetsOptions struct {
	*cmdutil.Globals
	output string
}

func newGetClusterSetsCommand(g *cmdutil.Globals) *cobra.Command {
	o := &getClusterSetsOptions{Globals: g}
	cmd := &cobra.Command{
		Use:     "clustersets [NAME...]",
		Aliases: []string{"clusterset", "managedclustersets", "mclset", "mclsets"},
		Short:   "List ManagedClusterSets with their namespaces and clusters",
		Long: `List the hub's ManagedClusterSets, or the named ones, with how each selects
its members, the namespaces it is bound to (whose Placements may use it),
and its member clusters (the first few; -o wide lists all).

-o json and -o yaml print the ManagedClusterSet objects: the object itself
for one NAME, as kubectl does, else a ManagedClusterSetList.`,
		Example: `  flotilla get clustersets
  flotilla get clustersets prod -o wide
  flotilla get clustersets -o yaml`,
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

func (o *getClusterSetsOptions) run(ctx context.Context, names []string) error {
	c, err := o.ClientsFor(cmdutil.HubSide)
	if err != nil {
		return err
	}
	items, err := cmdutil.GetOrList[clusterv1beta2.ManagedClusterSet](ctx, c, &clusterv1beta2.ManagedClusterSetList{},
		cmdutil.Lookup{Kind: "ManagedClusterSet", Names: names, ListCommand: "flotilla get clustersets"})
	if err != nil {
		return err
	}
	switch o.output {
	case cmdutil.OutputJSON, cmdutil.OutputYAML:
		gvk := clusterv1beta2.GroupVersion.WithKind("ManagedClusterSet")
		return cmdutil.PrintFound(o.Streams.Out, o.output, cmdutil.AsFound(items, gvk), cmdutil.ListKind(gvk), len(names) == 1)
	}
	if len(items) == 0 {
		o.Notef("No ManagedClusterSets yet: create one with `flotilla create clusterset NAME`.")
		return nil
	}
	bindings := &clusterv1beta2.ManagedClusterSetBindingList{}
	if err := c.Ctrl.List(ctx, bindings); err != nil {
		return cmdutil.ExplainClusterAPI(err, c, "list ManagedClusterSetBindings")
	}
	clusters := &clusterv1.ManagedClusterList{}
	if err := c.Ctrl.List(ctx, clusters); err != nil {
		return cmdutil.ExplainClusterAPI(err, c, "list ManagedClusters")
	}
	header, rows := clusterSetTable(items, bindings.Items, clusters.Items, time.Now(), o.output == cmdutil.OutputWide)
	return cmdutil.PrintTable(o.Streams.Out, header, rows)
}

// maxClustersShown is how many member clusters the text table names.
const maxClustersShown = 5

// clusterSetTable renders sets as table rows, with their bound namespaces
// and members; wide names every member.
func clusterSetTable(sets []clusterv1beta2.ManagedClusterSet, bindings []clusterv1beta2.ManagedClusterSetBinding,
	clusters []clusterv1.ManagedCluster, now time.Time, wide bool) (header []string, rows [][]string) {
	header = []string{"NAME", "SELECTOR", "BOUND NAMESPACES", "CLUSTERS", "MEMBERS", "AGE"}
	for i := range sets {
		set := &sets[i]
		var namespaces []string
		for _, b := range bindings {
			if b.Name == set.Name && b.Spec.ClusterSet == set.Name {
				namespaces = append(namespaces, b.Namespace)
			}
		}
		slices.Sort(namespaces)
		var members []string
		sel, err := clusterset.Selector(set)
		if err == nil {
			for _, mc := range clusters {
				if sel.Matches(labels.Set(mc.Labels)) {
					members = append(members, mc.Name)
				}
			}
		}
		slices.Sort(members)
		rows = append(rows, []string{
			set.Name,
			cmdutil.SelectorColumn(set, err),
			cmdutil.OrNone(strings.Join(namespaces, ",")),
			strconv.Itoa(len(members)),
			membersColumn(members, wide),
			cmdutil.AgeColumn(set.CreationTimestamp, now),
		})
	}
	return header, rows
}

// membersColumn names the members of a set, only the first few unless all.
func membersColumn(members []string, all bool) string {
	if len(members) == 0 {
		return "<none>"
	}
	shown := members
	if !all && len(members) > maxClustersShown {
		shown = members[:maxClustersShown]
	}
	s := strings.Join(shown, ",")
	if len(shown) < len(members) {
		s += fmt.Sprintf(",+%d more", len(members)-len(shown))
	}
	return s
}
