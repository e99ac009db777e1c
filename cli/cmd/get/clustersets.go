package get

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

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

-o json and -o yaml print the ManagedClusterSet objects.`,
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
	list := &clusterv1beta2.ManagedClusterSetList{}
	if len(names) == 0 {
		if err := c.Ctrl.List(ctx, list); err != nil {
			return cmdutil.ExplainClusterAPI(err, c, "list ManagedClusterSets")
		}
	}
	for _, name := range names {
		set := clusterv1beta2.ManagedClusterSet{}
		if err := c.Ctrl.Get(ctx, client.ObjectKey{Name: name}, &set); err != nil {
			if apierrors.IsNotFound(err) {
				return fmt.Errorf("ManagedClusterSet %q not found on %s (see `flotilla get clustersets` for the names)", name, c.Where)
			}
			return cmdutil.ExplainClusterAPI(err, c, "get ManagedClusterSet "+name)
		}
		list.Items = append(list.Items, set)
	}
	slices.SortFunc(list.Items, func(a, b clusterv1beta2.ManagedClusterSet) int { return strings.Compare(a.Name, b.Name) })

	switch o.output {
	case cmdutil.OutputJSON, cmdutil.OutputYAML:
		list.APIVersion, list.Kind = clusterv1beta2.GroupVersion.String(), "ManagedClusterSetList"
		list.ResourceVersion, list.Continue = "", ""
		for i := range list.Items {
			list.Items[i].APIVersion, list.Items[i].Kind = clusterv1beta2.GroupVersion.String(), "ManagedClusterSet"
			list.Items[i].ManagedFields = nil
		}
		return cmdutil.PrintData(o.Streams.Out, o.output, list)
	}
	if len(list.Items) == 0 {
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
	header, rows := clusterSetTable(list.Items, bindings.Items, clusters.Items, time.Now(), o.output == cmdutil.OutputWide)
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
