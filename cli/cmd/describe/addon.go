package describe

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/cli/cmdutil/workview"
	"github.com/flotilla-io/flotilla/internal/addon"
)

type describeAddOnOptions struct {
	*cmdutil.Globals
	clusters []string
	output   string
}

func newDescribeAddOnCommand(g *cmdutil.Globals) *cobra.Command {
	o := &describeAddOnOptions{Globals: g}
	cmd := &cobra.Command{
		Use:     "addon NAME [--clusters NAME[,NAME...]]",
		Aliases: []string{"addons", "clustermanagementaddon", "cma"},
		Short:   "Show an add-on: who runs it, how it is installed, its configs, and its state on each cluster",
		Long: `Show the add-on NAME as its ClusterManagementAddOn declares it (who runs it:
the hub's add-on manager or the add-on's own; its install strategy and
Placements; its default configs), then, on each cluster it is on (or on
the clusters of --clusters), its ManagedClusterAddOn: the install
namespace, the health check, the configs desired and applied, the
registrations its agent holds credentials for, the conditions, and the
ManifestWorks that deploy it.

-o json and -o yaml print the ManagedClusterAddOns, as a list.`,
		Example: `  flotilla describe addon hello
  flotilla describe addon hello --clusters cluster1
  flotilla describe addon hello -o yaml`,
		Args: exactlyOneName("add-on", "flotilla describe addon NAME [--clusters NAME[,NAME...]]"),
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
			return o.run(cmd.Context(), args[0])
		},
	}
	cmdutil.AddClustersFlag(g, cmd, &o.clusters, "show the add-on on these clusters only, comma separated")
	cmdutil.AddOutputFlag(cmd, &o.output, cmdutil.OutputJSON, cmdutil.OutputYAML)
	return cmd
}

func (o *describeAddOnOptions) run(ctx context.Context, name string) error {
	c, err := o.ClientsFor(cmdutil.HubSide)
	if err != nil {
		return err
	}
	cma := &addonv1alpha1.ClusterManagementAddOn{}
	if err := c.Ctrl.Get(ctx, client.ObjectKey{Name: name}, cma); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("add-on %q is not declared on the hub: there is no ClusterManagementAddOn %q (flotilla get addons lists the add-ons there are)", name, name)
		}
		return cmdutil.ExplainClusterAPI(err, c, "get ClusterManagementAddOn "+name)
	}
	list := &addonv1alpha1.ManagedClusterAddOnList{}
	if err := c.Ctrl.List(ctx, list); err != nil {
		return cmdutil.ExplainClusterAPI(err, c, "list ManagedClusterAddOns")
	}
	mcas := slices.DeleteFunc(list.Items, func(m addonv1alpha1.ManagedClusterAddOn) bool {
		return m.Name != name || (len(o.clusters) > 0 && !slices.Contains(o.clusters, m.Namespace))
	})
	slices.SortFunc(mcas, func(a, b addonv1alpha1.ManagedClusterAddOn) int { return strings.Compare(a.Namespace, b.Namespace) })
	if o.output != cmdutil.OutputText {
		gvk := addonv1alpha1.GroupVersion.WithKind("ManagedClusterAddOn")
		return cmdutil.PrintFound(o.Streams.Out, o.output, cmdutil.AsFound(mcas, gvk), cmdutil.ListKind(gvk), false)
	}
	works := map[string][]workv1.ManifestWork{}
	for _, m := range mcas {
		wl := &workv1.ManifestWorkList{}
		if err := c.Ctrl.List(ctx, wl, client.InNamespace(m.Namespace), client.MatchingLabels{addon.AddOnNameLabel: name}); err != nil {
			return cmdutil.Explain(err, c.Where, "list the ManifestWorks of add-on "+name+" in "+m.Namespace)
		}
		works[m.Namespace] = wl.Items
	}
	return writeAddOnDescription(o.Streams.Out, cma, mcas, works, len(o.clusters) > 0, time.Now())
}

// writeAddOnDescription writes what `describe addon` shows.
func writeAddOnDescription(w io.Writer, cma *addonv1alpha1.ClusterManagementAddOn, mcas []addonv1alpha1.ManagedClusterAddOn, works map[string][]workv1.ManifestWork, onlySome bool, now time.Time) error {
	runBy := "the hub's add-on manager"
	if l := cma.Annotations[addon.LifecycleAnnotation]; l != "" && l != addon.LifecycleAddOnManager {
		runBy = "its own manager (" + addon.LifecycleAnnotation + "=" + l + ")"
	}
	fmt.Fprintf(w, "Name:         %s\nDisplay name: %s\nRun by:       %s\n", cma.Name, cmdutil.OrNone(cma.Spec.AddOnMeta.DisplayName), runBy)
	switch {
	case cma.Spec.InstallStrategy.Type == addonv1alpha1.AddonInstallStrategyPlacements:
		var ps []string
		for _, p := range cma.Spec.InstallStrategy.Placements {
			ps = append(ps, p.Namespace+"/"+p.Name+" (rollout "+cmdutil.OrDash(string(p.RolloutStrategy.Type))+")")
		}
		fmt.Fprintf(w, "Installed:    on the clusters of Placements %s\n", cmdutil.OrNone(strings.Join(ps, ", ")))
	default:
		fmt.Fprintf(w, "Installed:    by hand (Manual): `flotilla addon enable --names %s --clusters NAME` adds a cluster\n", cma.Name)
	}
	var defaults []string
	for _, sc := range cma.Spec.SupportedConfigs {
		if sc.DefaultConfig != nil {
			defaults = append(defaults, configName(sc.Resource, sc.DefaultConfig.Namespace, sc.DefaultConfig.Name))
		}
	}
	fmt.Fprintf(w, "Defaults:     %s\n", cmdutil.OrNone(strings.Join(defaults, ", ")))
	fmt.Fprintf(w, "Clusters:     %d\n", len(mcas))
	if len(mcas) == 0 {
		if onlySome {
			fmt.Fprintln(w, "  (not on these clusters)")
		} else {
			fmt.Fprintf(w, "  (on no cluster yet: `flotilla addon enable --names %s --clusters NAME`)\n", cma.Name)
		}
		return nil
	}
	for i := range mcas {
		if err := writeClusterAddOn(w, &mcas[i], works[mcas[i].Namespace], now); err != nil {
			return err
		}
	}
	return nil
}

// writeClusterAddOn writes one cluster's ManagedClusterAddOn.
func writeClusterAddOn(w io.Writer, m *addonv1alpha1.ManagedClusterAddOn, works []workv1.ManifestWork, now time.Time) error {
	fmt.Fprintf(w, "\nCluster %s:\n", m.Namespace)
	ns := cmdutil.OrNone(m.Status.Namespace)
	if m.Status.Namespace == "" && m.Spec.InstallNamespace != "" {
		ns = m.Spec.InstallNamespace + " (asked; not reported yet)"
	}
	fmt.Fprintf(w, "  Namespace:    %s\n  Health:       %s\n  Age:          %s\n", ns, cmdutil.OrNone(m.Status.HealthCheck.Mode), cmdutil.AgeColumn(m.CreationTimestamp, now))
	if m.DeletionTimestamp != nil {
		fmt.Fprintln(w, "  Deleting:     its pre-delete hook and its agent's removal are under way")
	}
	fmt.Fprintln(w, "  Configs:")
	if len(m.Status.ConfigReferences) == 0 {
		fmt.Fprintln(w, "    (none)")
	} else {
		rows := make([][]string, 0, len(m.Status.ConfigReferences))
		for _, r := range m.Status.ConfigReferences {
			desired, applied := "-", "-"
			if r.DesiredConfig != nil {
				desired = configName(r.Resource, r.DesiredConfig.Namespace, r.DesiredConfig.Name) + " " + shortHash(r.DesiredConfig.SpecHash)
			}
			if r.LastAppliedConfig != nil {
				applied = configName(r.Resource, r.LastAppliedConfig.Namespace, r.LastAppliedConfig.Name) + " " + shortHash(r.LastAppliedConfig.SpecHash)
			}
			rows = append(rows, []string{"    " + desired, applied})
		}
		if err := cmdutil.PrintTable(w, []string{"    DESIRED", "APPLIED"}, rows); err != nil {
			return err
		}
	}
	fmt.Fprintln(w, "  Registrations:")
	if len(m.Status.Registrations) == 0 {
		fmt.Fprintln(w, "    (none)")
	} else {
		rows := make([][]string, 0, len(m.Status.Registrations))
		for _, r := range m.Status.Registrations {
			rows = append(rows, []string{"    " + r.SignerName, cmdutil.OrDash(r.Subject.User), cmdutil.OrDash(strings.Join(r.Subject.Groups, ","))})
		}
		if err := cmdutil.PrintTable(w, []string{"    SIGNER", "USER", "GROUPS"}, rows); err != nil {
			return err
		}
	}
	if err := writeIndentedConditions(w, "  ", m.Status.Conditions, "(none yet: neither its manager nor its agent has reported)"); err != nil {
		return err
	}
	fmt.Fprintln(w, "  ManifestWorks:")
	if len(works) == 0 {
		fmt.Fprintln(w, "    (none)")
		return nil
	}
	slices.SortFunc(works, func(a, b workv1.ManifestWork) int { return strings.Compare(a.Name, b.Name) })
	rows := make([][]string, 0, len(works))
	for _, mw := range works {
		rows = append(rows, []string{"    " + mw.Name, workview.WorkConditionColumn(mw.Status.Conditions, workv1.WorkApplied),
			workview.WorkConditionColumn(mw.Status.Conditions, workv1.WorkAvailable), cmdutil.AgeColumn(mw.CreationTimestamp, now)})
	}
	return cmdutil.PrintTable(w, []string{"    NAME", "APPLIED", "AVAILABLE", "AGE"}, rows)
}

// configName is RESOURCE/[NAMESPACE/]NAME.
func configName(resource, namespace, name string) string {
	if namespace == "" {
		return resource + "/" + name
	}
	return resource + "/" + namespace + "/" + name
}

// shortHash shows the start of a spec hash, in brackets.
func shortHash(h string) string {
	if h == "" {
		return "(no hash)"
	}
	return "(" + h[:min(len(h), 12)] + ")"
}
