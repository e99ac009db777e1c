package addon

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
)

// NewCommand is `flotilla addon`: enable and disable add-ons.
func NewCommand(g *cmdutil.Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "addon",
		Aliases: []string{"addons"},
		Short:   "Enable and disable OCM add-ons on clusters",
		Long: `An add-on is declared on the hub by a ClusterManagementAddOn (its name is
the add-on's name) and installed on a cluster by a ManagedClusterAddOn of
that name in the cluster's namespace. "flotilla addon enable" creates them
for the clusters you name (the add-on's install strategy is Manual) or
points the add-on at a Placement (the hub then installs it on the clusters
the Placement chooses, and removes it from the others).

See the add-ons and their state on each cluster with "flotilla get addons".`,
		Example: `  flotilla addon enable --names hello --clusters cluster1,cluster2
  flotilla addon enable --names hello --placement apps/prod
  flotilla addon disable --names hello --clusters cluster2`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("name what to do: flotilla addon enable|disable --names NAME[,NAME...] ...")
			}
			return fmt.Errorf("flotilla addon does not know %q: it can enable or disable", args[0])
		},
	}
	cmd.AddCommand(newEnableCommand(g), newDisableCommand(g))
	return cmd
}

// targets are the flags that say where an add-on goes: clusters by name,
// or a Placement.
type targets struct {
	names     []string
	clusters  []string
	placement string
}

func (t *targets) addFlags(g *cmdutil.Globals, cmd *cobra.Command, verb string) {
	cmd.Flags().StringSliceVar(&t.names, "names", nil, "names of the add-ons to "+verb+", comma separated (their ClusterManagementAddOns)")
	cmdutil.AddClustersFlag(g, cmd, &t.clusters, "names of the clusters to "+verb+" the add-ons on, comma separated")
	cmd.Flags().StringVar(&t.placement, "placement", "", "NAMESPACE/NAME of a Placement whose clusters the add-ons are "+map[string]string{"enable": "installed on", "disable": "no longer installed on"}[verb])
}

// check validates the flags; allClusters says whether "every cluster" is
// a target of its own (disable --all-clusters).
func (t *targets) check(command string, allClusters bool) error {
	t.names = cmdutil.CleanClusterList(t.names)
	t.clusters = cmdutil.CleanClusterList(t.clusters)
	if len(t.names) == 0 {
		return fmt.Errorf("say which add-ons: %s --names NAME[,NAME...] (flotilla get addons lists them)", command)
	}
	given := 0
	for _, set := range []bool{len(t.clusters) > 0, t.placement != "", allClusters} {
		if set {
			given++
		}
	}
	where := "--clusters NAME[,NAME...] or --placement NAMESPACE/NAME"
	if command == "flotilla addon disable" {
		where += " or --all-clusters"
	}
	switch {
	case given == 0:
		return fmt.Errorf("say where: %s --names %s with %s", command, strings.Join(t.names, ","), where)
	case given > 1:
		return fmt.Errorf("say where with one of %s, not several", where)
	}
	if t.placement != "" {
		if _, _, err := t.placementKey(); err != nil {
			return err
		}
	}
	if len(t.clusters) == 0 {
		return nil
	}
	return cmdutil.ValidateClusterList(t.clusters)
}

// placementKey splits --placement NAMESPACE/NAME.
func (t *targets) placementKey() (string, string, error) {
	ns, name, ok := strings.Cut(t.placement, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("--placement %q: give the Placement as NAMESPACE/NAME, e.g. --placement apps/prod", t.placement)
	}
	return ns, name, nil
}

// declared returns the ClusterManagementAddOns of names, or says which is
// not declared.
func declared(ctx context.Context, c *cmdutil.Clients, names []string) ([]*addonv1alpha1.ClusterManagementAddOn, error) {
	var cmas []*addonv1alpha1.ClusterManagementAddOn
	for _, name := range names {
		cma := &addonv1alpha1.ClusterManagementAddOn{}
		err := c.Ctrl.Get(ctx, client.ObjectKey{Name: name}, cma)
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("add-on %q is not declared on the hub: there is no ClusterManagementAddOn %q (flotilla get addons lists the add-ons there are)", name, name)
		}
		if err != nil {
			return nil, cmdutil.Explain(err, c.Where, "read ClusterManagementAddOn "+name)
		}
		cmas = append(cmas, cma)
	}
	return cmas, nil
}

// managedClusters checks that every one of names is a cluster of the hub.
func managedClusters(ctx context.Context, c *cmdutil.Clients, names []string) error {
	for _, name := range names {
		err := c.Ctrl.Get(ctx, client.ObjectKey{Name: name}, &clusterv1.ManagedCluster{})
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("cluster %q is not a managed cluster of the hub (flotilla get clusters lists them)", name)
		}
		if err != nil {
			return cmdutil.ExplainClusterAPI(err, c, "read ManagedCluster "+name)
		}
	}
	return nil
}

// placementExists checks that Placement ns/name exists.
func placementExists(ctx context.Context, c *cmdutil.Clients, ns, name string) error {
	err := c.Ctrl.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &clusterv1beta1.Placement{})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("there is no Placement %s/%s (flotilla get placements -n %s lists them; flotilla create placement makes one)", ns, name, ns)
	}
	if err != nil {
		return cmdutil.Explain(err, c.Where, "read Placement "+ns+"/"+name)
	}
	return nil
}

// byPlacements says whether the add-on's clusters are chosen by Placements.
//
// One typed Placements whose last Placement went (addon disable
// --placement) is installed by none: it may be enabled by hand again.
func byPlacements(cma *addonv1alpha1.ClusterManagementAddOn) bool {
	return cma.Spec.InstallStrategy.Type == addonv1alpha1.AddonInstallStrategyPlacements && len(cma.Spec.InstallStrategy.Placements) > 0
}

// placementNames lists the add-on's Placements as NAMESPACE/NAME.
func placementNames(cma *addonv1alpha1.ClusterManagementAddOn) string {
	var names []string
	for _, p := range cma.Spec.InstallStrategy.Placements {
		names = append(names, p.Namespace+"/"+p.Name)
	}
	return strings.Join(names, ", ")
}

// byHandOnly refuses, for the first of cmas installed by Placements, to
// act on single clusters: consequence says what the hub would do, instead
// what to do.
func byHandOnly(cmas []*addonv1alpha1.ClusterManagementAddOn, consequence, instead string) error {
	for _, cma := range cmas {
		if byPlacements(cma) {
			return fmt.Errorf("add-on %s is installed by Placements (%s): %s. %s", cma.Name, placementNames(cma), consequence, instead)
		}
	}
	return nil
}
