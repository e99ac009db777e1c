package addon

import (
	"context"
	"fmt"
	"slices"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
)

type disableOptions struct {
	*cmdutil.Globals
	targets
	all bool
}

func newDisableCommand(g *cmdutil.Globals) *cobra.Command {
	o := &disableOptions{Globals: g}
	cmd := &cobra.Command{
		Use:   "disable --names NAME[,NAME...] (--clusters NAME[,NAME...] | --all-clusters | --placement NAMESPACE/NAME)",
		Short: "Remove add-ons from clusters, or from the clusters of a Placement",
		Long: `With --clusters (or --all-clusters), delete each add-on's
ManagedClusterAddOn in those clusters' namespaces, as "clusteradm addon
disable" does: the add-on's pre-delete hook runs, then its agent and its
credentials are removed from the cluster. A cluster without the add-on is
reported, not an error.

With --placement, take the Placement out of each add-on's install
strategy: the hub removes the add-on from the clusters no other Placement
of the add-on chooses. An add-on installed by Placements cannot be
disabled on single clusters (the hub would install it again): change the
Placement, or its install strategy.`,
		Example: `  flotilla addon disable --names hello --clusters cluster2
  flotilla addon disable --names hello,metrics --all-clusters
  flotilla addon disable --names hello --placement apps/prod`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.check("flotilla addon disable", o.all); err != nil {
				return err
			}
			return o.run(cmd.Context())
		},
	}
	o.addFlags(g, cmd, "disable")
	cmd.Flags().BoolVar(&o.all, "all-clusters", false, "remove the add-ons from every cluster they are on")
	return cmd
}

func (o *disableOptions) run(ctx context.Context) error {
	c, err := o.ClientsFor(cmdutil.HubSide)
	if err != nil {
		return err
	}
	cmas, err := declared(ctx, c, o.names)
	if err != nil {
		return err
	}
	if o.placement != "" {
		return o.disableByPlacement(ctx, c, cmas)
	}
	if err := byHandOnly(cmas, "the hub would install it again on the clusters they choose",
		"Disable it with --placement, or change the Placement's clusters"); err != nil {
		return err
	}
	for _, cma := range cmas {
		clusters := o.clusters
		if o.all {
			if clusters, err = installedOn(ctx, c, cma.Name); err != nil {
				return err
			}
			if len(clusters) == 0 {
				fmt.Fprintf(o.Streams.Out, "Add-on %s is on no cluster.\n", cma.Name)
			}
		}
		for _, cluster := range clusters {
			mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: cma.Name}}
			err := c.Ctrl.Delete(ctx, mca)
			switch {
			case apierrors.IsNotFound(err):
				fmt.Fprintf(o.Streams.Out, "Add-on %s is not on cluster %s.\n", cma.Name, cluster)
			case err != nil:
				return cmdutil.Explain(err, c.Where, fmt.Sprintf("delete ManagedClusterAddOn %s/%s", cluster, cma.Name))
			default:
				fmt.Fprintf(o.Streams.Out, "Add-on %s disabled on cluster %s (ManagedClusterAddOn %s/%s deleted).\n", cma.Name, cluster, cluster, cma.Name)
			}
		}
	}
	return nil
}

// disableByPlacement takes the Placement out of each add-on's install strategy.
func (o *disableOptions) disableByPlacement(ctx context.Context, c *cmdutil.Clients, cmas []*addonv1alpha1.ClusterManagementAddOn) error {
	ns, name, _ := o.placementKey()
	for _, cma := range cmas {
		removed := false
		cur := &addonv1alpha1.ClusterManagementAddOn{}
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := c.Ctrl.Get(ctx, client.ObjectKey{Name: cma.Name}, cur); err != nil {
				return err
			}
			s := &cur.Spec.InstallStrategy
			n := len(s.Placements)
			s.Placements = slices.DeleteFunc(s.Placements, func(p addonv1alpha1.PlacementStrategy) bool { return p.Namespace == ns && p.Name == name })
			removed = len(s.Placements) < n
			if !removed {
				return nil
			}
			return c.Ctrl.Update(ctx, cur)
		})
		switch {
		case err != nil:
			return cmdutil.Explain(err, c.Where, "update ClusterManagementAddOn "+cma.Name)
		case !removed:
			fmt.Fprintf(o.Streams.Out, "Add-on %s is not installed by Placement %s/%s.\n", cma.Name, ns, name)
		case len(cur.Spec.InstallStrategy.Placements) == 0:
			fmt.Fprintf(o.Streams.Out, "Add-on %s is no longer installed by Placement %s/%s, and by no Placement now: the hub removes it from every cluster.\n", cma.Name, ns, name)
		default:
			fmt.Fprintf(o.Streams.Out, "Add-on %s is no longer installed by Placement %s/%s; it stays on the clusters of %s.\n", cma.Name, ns, name, placementNames(cur))
		}
	}
	return nil
}
