package addon

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/internal/addon"
)

type enableOptions struct {
	*cmdutil.Globals
	targets
	installNamespace string
	configs          []string
	force            bool
}

func newEnableCommand(g *cmdutil.Globals) *cobra.Command {
	o := &enableOptions{Globals: g}
	cmd := &cobra.Command{
		Use:   "enable --names NAME[,NAME...] (--clusters NAME[,NAME...] | --placement NAMESPACE/NAME)",
		Short: "Install add-ons on clusters, or on the clusters of a Placement",
		Long: `With --clusters, create (or update) the ManagedClusterAddOn of each add-on
in each cluster's namespace, as "clusteradm addon enable" does: the add-on's
manager then installs its agent there. --namespace is the install
namespace on the cluster (ManagedClusterAddOn spec.installNamespace);
--config, repeated, sets the add-on's configs on these clusters
(spec.configs), each as RESOURCE[.GROUP]/[NAMESPACE/]NAME, the group
being addon.open-cluster-management.io when not given.

With --placement, add the Placement to the add-on's install strategy (its
type becomes Placements): the hub installs the add-on on every cluster the
Placement chooses, and removes it from every cluster no Placement of the
add-on chooses. If the add-on is on clusters already, by hand, that would
remove it from those the Placement does not choose: the command refuses
unless --force.

Each add-on must be declared on the hub (a ClusterManagementAddOn), each
cluster must be a managed cluster, the Placement must exist.`,
		Example: `  flotilla addon enable --names hello --clusters cluster1,cluster2
  flotilla addon enable --names hello --clusters cluster1 --namespace hello-agent \
    --config addondeploymentconfigs/hello-config/cluster1-config
  flotilla addon enable --names hello,metrics --placement apps/prod`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.check("flotilla addon enable", false); err != nil {
				return err
			}
			configs, err := parseConfigs(o.configs)
			if err != nil {
				return err
			}
			if o.placement != "" && (o.installNamespace != "" || len(configs) > 0) {
				return fmt.Errorf("--namespace and --config set one cluster's ManagedClusterAddOn: give them with --clusters, not --placement (a Placement's configs are in the add-on's install strategy)")
			}
			if o.installNamespace != "" {
				if errs := validation.IsDNS1123Label(o.installNamespace); len(errs) > 0 {
					return fmt.Errorf("--namespace %q is not a namespace name: %s", o.installNamespace, strings.Join(errs, "; "))
				}
			}
			return o.run(cmd.Context(), configs)
		},
	}
	o.addFlags(g, cmd, "enable")
	cmd.Flags().StringVarP(&o.installNamespace, "namespace", "n", "", "the namespace on each cluster to install the add-on's agent in (default: the add-on's own choice, else "+addon.DefaultInstallNamespace+")")
	cmd.Flags().StringArrayVar(&o.configs, "config", nil, "a config of the add-on on these clusters, RESOURCE[.GROUP]/[NAMESPACE/]NAME (repeat for several)")
	cmd.Flags().BoolVar(&o.force, "force", false, "with --placement: switch an add-on installed by hand to Placements even if that removes it from clusters the Placement does not choose")
	return cmd
}

// parseConfigs reads --config values.
func parseConfigs(values []string) ([]addonv1alpha1.AddOnConfig, error) {
	var configs []addonv1alpha1.AddOnConfig
	for _, v := range values {
		parts := strings.Split(v, "/")
		if len(parts) < 2 || len(parts) > 3 || slices.Contains(parts, "") {
			return nil, fmt.Errorf("--config %q: give a config as RESOURCE[.GROUP]/[NAMESPACE/]NAME, e.g. --config addondeploymentconfigs/hello-config/cluster1-config", v)
		}
		resource, group, ok := strings.Cut(parts[0], ".")
		if !ok {
			group = addon.Group
		}
		c := addonv1alpha1.AddOnConfig{ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: group, Resource: resource}}
		c.Name = parts[len(parts)-1]
		if len(parts) == 3 {
			c.Namespace = parts[1]
		}
		configs = append(configs, c)
	}
	return configs, nil
}

func (o *enableOptions) run(ctx context.Context, configs []addonv1alpha1.AddOnConfig) error {
	c, err := o.ClientsFor(cmdutil.HubSide)
	if err != nil {
		return err
	}
	cmas, err := declared(ctx, c, o.names)
	if err != nil {
		return err
	}
	if o.placement != "" {
		return o.enableByPlacement(ctx, c, cmas)
	}
	if err := byHandOnly(cmas, "the hub removes it from every cluster they do not choose",
		"Enable it with --placement, or change its ClusterManagementAddOn's spec.installStrategy to Manual first"); err != nil {
		return err
	}
	if err := managedClusters(ctx, c, o.clusters); err != nil {
		return err
	}
	for _, cma := range cmas {
		if err := o.manual(ctx, c, cma); err != nil {
			return err
		}
		for _, cluster := range o.clusters {
			created, err := o.apply(ctx, c, cma.Name, cluster, configs)
			if err != nil {
				return err
			}
			fmt.Fprintf(o.Streams.Out, "Add-on %s enabled on cluster %s (ManagedClusterAddOn %s/%s %s).\n", cma.Name, cluster, cluster, cma.Name, map[bool]string{true: "created", false: "updated"}[created])
		}
	}
	o.Notef("See their state with: flotilla get addons %s", strings.Join(o.names, " "))
	return nil
}

// manual makes the install strategy of an add-on that its last Placement
// left (typed Placements, with none) Manual, so that the hub keeps the
// ManagedClusterAddOns made by hand instead of removing them as chosen by
// no Placement.
func (o *enableOptions) manual(ctx context.Context, c *cmdutil.Clients, cma *addonv1alpha1.ClusterManagementAddOn) error {
	if cma.Spec.InstallStrategy.Type != addonv1alpha1.AddonInstallStrategyPlacements {
		return nil
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := &addonv1alpha1.ClusterManagementAddOn{}
		if err := c.Ctrl.Get(ctx, client.ObjectKey{Name: cma.Name}, cur); err != nil {
			return err
		}
		if byPlacements(cur) {
			return fmt.Errorf("add-on %s is installed by Placements (%s) now: enable it with --placement", cur.Name, placementNames(cur))
		}
		cur.Spec.InstallStrategy = addonv1alpha1.InstallStrategy{Type: addonv1alpha1.AddonInstallStrategyManual}
		return c.Ctrl.Update(ctx, cur)
	})
	if err != nil {
		return cmdutil.Explain(err, c.Where, "update ClusterManagementAddOn "+cma.Name)
	}
	o.Notef("Add-on %s was installed by no Placement: its install strategy is Manual now.", cma.Name)
	return nil
}

// apply creates or updates ManagedClusterAddOn cluster/name; it says
// whether it created it.
func (o *enableOptions) apply(ctx context.Context, c *cmdutil.Clients, name, cluster string, configs []addonv1alpha1.AddOnConfig) (bool, error) {
	created := false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		mca := &addonv1alpha1.ManagedClusterAddOn{}
		err := c.Ctrl.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, mca)
		if apierrors.IsNotFound(err) {
			mca = &addonv1alpha1.ManagedClusterAddOn{
				ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name},
				Spec:       addonv1alpha1.ManagedClusterAddOnSpec{InstallNamespace: o.installNamespace, Configs: configs},
			}
			created = true
			return c.Ctrl.Create(ctx, mca)
		}
		if err != nil {
			return err
		}
		created = false
		if o.installNamespace != "" {
			mca.Spec.InstallNamespace = o.installNamespace
		}
		if len(configs) > 0 {
			mca.Spec.Configs = configs
		}
		return c.Ctrl.Update(ctx, mca)
	})
	if err != nil {
		return false, cmdutil.Explain(err, c.Where, fmt.Sprintf("write ManagedClusterAddOn %s/%s", cluster, name))
	}
	return created, nil
}

// enableByPlacement adds the Placement to each add-on's install strategy.
func (o *enableOptions) enableByPlacement(ctx context.Context, c *cmdutil.Clients, cmas []*addonv1alpha1.ClusterManagementAddOn) error {
	ns, name, _ := o.placementKey()
	if err := placementExists(ctx, c, ns, name); err != nil {
		return err
	}
	for _, cma := range cmas {
		if !byPlacements(cma) && !o.force {
			installed, err := installedOn(ctx, c, cma.Name)
			if err != nil {
				return err
			}
			if len(installed) > 0 {
				return fmt.Errorf("add-on %s is installed by hand on %s: with --placement the hub keeps it only where a Placement chooses, and removes it from the other clusters. "+
					"Pass --force to do so", cma.Name, cmdutil.Plural(len(installed), "cluster")+" ("+strings.Join(installed, ", ")+")")
			}
		}
		added := false
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur := &addonv1alpha1.ClusterManagementAddOn{}
			if err := c.Ctrl.Get(ctx, client.ObjectKey{Name: cma.Name}, cur); err != nil {
				return err
			}
			s := &cur.Spec.InstallStrategy
			s.Type = addonv1alpha1.AddonInstallStrategyPlacements
			added = !slices.ContainsFunc(s.Placements, func(p addonv1alpha1.PlacementStrategy) bool { return p.Namespace == ns && p.Name == name })
			if added {
				s.Placements = append(s.Placements, addonv1alpha1.PlacementStrategy{PlacementRef: addonv1alpha1.PlacementRef{Namespace: ns, Name: name}})
			}
			return c.Ctrl.Update(ctx, cur)
		})
		if err != nil {
			return cmdutil.Explain(err, c.Where, "update ClusterManagementAddOn "+cma.Name)
		}
		if added {
			fmt.Fprintf(o.Streams.Out, "Add-on %s is installed on the clusters of Placement %s/%s.\n", cma.Name, ns, name)
		} else {
			fmt.Fprintf(o.Streams.Out, "Add-on %s was installed on the clusters of Placement %s/%s already.\n", cma.Name, ns, name)
		}
	}
	o.Notef("See their state with: flotilla get addons %s", strings.Join(o.names, " "))
	return nil
}

// installedOn lists the clusters that have a ManagedClusterAddOn of name.
func installedOn(ctx context.Context, c *cmdutil.Clients, name string) ([]string, error) {
	list := &addonv1alpha1.ManagedClusterAddOnList{}
	if err := c.Ctrl.List(ctx, list); err != nil {
		return nil, cmdutil.Explain(err, c.Where, "list ManagedClusterAddOns")
	}
	var clusters []string
	for _, mca := range list.Items {
		if mca.Name == name {
			clusters = append(clusters, mca.Namespace)
		}
	}
	slices.Sort(clusters)
	return clusters, nil
}
