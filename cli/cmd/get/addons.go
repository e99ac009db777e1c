package get

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/internal/addon"
)

// withAddOnGets adds `get addons` to the get command.
func withAddOnGets(g *cmdutil.Globals, get *cobra.Command) *cobra.Command {
	get.AddCommand(newGetAddOnsCommand(g))
	return get
}

type getAddOnsOptions struct {
	*cmdutil.Globals
	clusters []string
	output   string
}

func newGetAddOnsCommand(g *cmdutil.Globals) *cobra.Command {
	o := &getAddOnsOptions{Globals: g}
	cmd := &cobra.Command{
		Use:     "addons [NAME...] [--clusters NAME[,NAME...]]",
		Aliases: []string{"addon", "managedclusteraddons", "mca"},
		Short:   "Show the add-ons of each cluster: available, degraded, progressing, configs",
		Long: `Show every add-on on every cluster (a ManagedClusterAddOn in the cluster's
namespace), or only the add-ons named, on the clusters of --clusters: its
Available, Degraded and Progressing conditions as the add-on's manager and
agent report them, and its configs (RESOURCE/[NAMESPACE/]NAME; a "*" marks
a config not yet applied on the cluster). Declared add-ons that are on no
cluster are named under the table.

-o json and -o yaml print the ManagedClusterAddOns, as a list.`,
		Example: `  flotilla get addons
  flotilla get addons hello --clusters cluster1,cluster2
  flotilla get addons -o json | jq -r '.items[] | select(.status.conditions[]? | .type == "Available" and .status != "True") | .metadata.namespace'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckOutput(o.output, cmdutil.OutputJSON, cmdutil.OutputYAML); err != nil {
				return err
			}
			o.clusters = cmdutil.CleanClusterList(o.clusters)
			if len(o.clusters) > 0 {
				if err := cmdutil.ValidateClusterList(o.clusters); err != nil {
					return err
				}
			}
			return o.run(cmd.Context(), args)
		},
	}
	cmdutil.AddClustersFlag(g, cmd, &o.clusters, "show only these clusters, comma separated")
	cmdutil.AddOutputFlag(cmd, &o.output, cmdutil.OutputJSON, cmdutil.OutputYAML)
	return cmd
}

func (o *getAddOnsOptions) run(ctx context.Context, names []string) error {
	c, err := o.ClientsFor(cmdutil.HubSide)
	if err != nil {
		return err
	}
	cmas := &addonv1alpha1.ClusterManagementAddOnList{}
	if err := c.Ctrl.List(ctx, cmas); err != nil {
		return cmdutil.ExplainClusterAPI(err, c, "list ClusterManagementAddOns")
	}
	declared := map[string]bool{}
	for _, cma := range cmas.Items {
		declared[cma.Name] = true
	}
	for _, n := range names {
		if !declared[n] {
			return fmt.Errorf("add-on %q is not declared on the hub: there is no ClusterManagementAddOn %q (flotilla get addons lists the add-ons there are)", n, n)
		}
	}
	mcas := &addonv1alpha1.ManagedClusterAddOnList{}
	if err := c.Ctrl.List(ctx, mcas); err != nil {
		return cmdutil.ExplainClusterAPI(err, c, "list ManagedClusterAddOns")
	}
	items := slices.DeleteFunc(mcas.Items, func(m addonv1alpha1.ManagedClusterAddOn) bool {
		return (len(names) > 0 && !slices.Contains(names, m.Name)) || (len(o.clusters) > 0 && !slices.Contains(o.clusters, m.Namespace))
	})
	slices.SortFunc(items, func(a, b addonv1alpha1.ManagedClusterAddOn) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(a.Namespace, b.Namespace))
	})
	if o.output != "" {
		gvk := addonv1alpha1.GroupVersion.WithKind("ManagedClusterAddOn")
		return cmdutil.PrintFound(o.Streams.Out, o.output, cmdutil.AsFound(items, gvk), cmdutil.ListKind(gvk), false)
	}
	if len(items) > 0 {
		header, rows := addOnTable(items)
		if err := cmdutil.PrintTable(o.Streams.Out, header, rows); err != nil {
			return err
		}
	}
	if idle := idleAddOns(cmas.Items, mcas.Items, names); len(o.clusters) == 0 && len(idle) > 0 {
		o.Notef("Declared, on no cluster: %s (flotilla addon enable --names NAME --clusters ... installs one).", strings.Join(idle, ", "))
	} else if len(items) == 0 {
		o.Notef("No add-ons on %s.", map[bool]string{true: "any cluster", false: "clusters " + strings.Join(o.clusters, ", ")}[len(o.clusters) == 0])
	}
	return nil
}

// addOnTable is the table of `get addons`: ADDON, CLUSTER, AVAILABLE,
// DEGRADED, PROGRESSING, CONFIGS.
func addOnTable(items []addonv1alpha1.ManagedClusterAddOn) (header []string, rows [][]string) {
	header = []string{"ADDON", "CLUSTER", "AVAILABLE", "DEGRADED", "PROGRESSING", "CONFIGS"}
	for _, m := range items {
		rows = append(rows, []string{m.Name, m.Namespace,
			conditionOrDash(m.Status.Conditions, addon.ConditionAvailable),
			conditionOrDash(m.Status.Conditions, addon.ConditionDegraded),
			conditionOrDash(m.Status.Conditions, addon.ConditionProgressing),
			configsColumn(m.Status.ConfigReferences),
		})
	}
	return header, rows
}

// conditionOrDash is a condition's status, "-" while nobody reported it.
func conditionOrDash(conds []metav1.Condition, t string) string {
	if c := meta.FindStatusCondition(conds, t); c != nil {
		return string(c.Status)
	}
	return "-"
}

// configsColumn lists the configs in effect, RESOURCE/[NAMESPACE/]NAME,
// with a "*" where the desired config is not the one last applied.
func configsColumn(refs []addonv1alpha1.ConfigReference) string {
	var cells []string
	for _, r := range refs {
		want := r.DesiredConfig
		if want == nil {
			continue
		}
		cell := r.Resource + "/" + want.Name
		if want.Namespace != "" {
			cell = r.Resource + "/" + want.Namespace + "/" + want.Name
		}
		if r.LastAppliedConfig == nil || r.LastAppliedConfig.SpecHash != want.SpecHash || r.LastAppliedConfig.Name != want.Name || r.LastAppliedConfig.Namespace != want.Namespace {
			cell += "*"
		}
		cells = append(cells, cell)
	}
	return cmdutil.OrDash(strings.Join(cells, ","))
}

// idleAddOns are the declared add-ons (of names, if any) on no cluster.
func idleAddOns(cmas []addonv1alpha1.ClusterManagementAddOn, mcas []addonv1alpha1.ManagedClusterAddOn, names []string) []string {
	on := map[string]bool{}
	for _, m := range mcas {
		on[m.Name] = true
	}
	var idle []string
	for _, cma := range cmas {
		if !on[cma.Name] && (len(names) == 0 || slices.Contains(names, cma.Name)) {
			idle = append(idle, cma.Name)
		}
	}
	slices.Sort(idle)
	return idle
}
