package create

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
)

type createClusterSetOptions struct {
	*cmdutil.Globals
	selector string
}

func newCreateClusterSetCommand(g *cmdutil.Globals) *cobra.Command {
	o := &createClusterSetOptions{Globals: g}
	cmd := &cobra.Command{
		Use:     "clusterset NAME [--selector LABELS]",
		Aliases: []string{"clustersets", "managedclusterset", "mclset"},
		Short:   "Create a ManagedClusterSet",
		Long: `Create ManagedClusterSet NAME. Without --selector, its members are the
clusters labelled cluster.open-cluster-management.io/clusterset=NAME (put
them in with "flotilla clusterset set"); a cluster is in at most one such
set. With --selector, its members are the clusters whose labels match the
selector (kubectl syntax), whatever set they are labelled into.`,
		Example: `  flotilla create clusterset prod
  flotilla create clusterset eu --selector 'region in (eu-west,eu-central)'`,
		Args: cmdutil.SetNameArg("flotilla create clusterset NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), args[0])
		},
	}
	cmd.Flags().StringVar(&o.selector, "selector", "", "select members by labels (e.g. env=prod,tier!=test) instead of by the clusterset label")
	return cmd
}

func (o *createClusterSetOptions) run(ctx context.Context, name string) error {
	set := &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: name}}
	set.Spec.ClusterSelector.SelectorType = clusterv1beta2.ExclusiveClusterSetLabel
	if o.selector != "" {
		sel, err := cmdutil.ParseLabelSelector("--selector", o.selector)
		if err != nil {
			return err
		}
		set.Spec.ClusterSelector = clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.LabelSelector, LabelSelector: sel}
	}
	c, err := o.ClientsFor(cmdutil.HubSide)
	if err != nil {
		return err
	}
	if err := c.Ctrl.Create(ctx, set); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("ManagedClusterSet %s already exists on %s (see `flotilla get clustersets %s`)", name, c.Where, name)
		}
		return cmdutil.ExplainClusterAPI(err, c, "create ManagedClusterSet "+name)
	}
	if o.selector != "" {
		fmt.Fprintf(o.Streams.Out, "ManagedClusterSet %s created: its members are the clusters matching %s.\n", name, o.selector)
	} else {
		fmt.Fprintf(o.Streams.Out, "ManagedClusterSet %s created. Put clusters in with `flotilla clusterset set %s --clusters NAME[,NAME...]`.\n", name, name)
	}
	o.Notef("Bind it to a namespace for its Placements: `flotilla clusterset bind %s --namespace NAMESPACE`", name)
	return nil
}
