package clusterset

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
)

// NewCommand is `flotilla clusterset`: membership and bindings.
func NewCommand(g *cmdutil.Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "clusterset",
		Aliases: []string{"clustersets", "managedclusterset", "mclset"},
		Short:   "Put clusters into ManagedClusterSets and bind sets to namespaces",
		Long: `A ManagedClusterSet groups clusters; binding it to a namespace lets the
Placements of that namespace choose from it. Every cluster starts in the
set "default"; the set "global" holds every cluster.

Create a set with "flotilla create clusterset", list sets with
"flotilla get clustersets".`,
		Example: `  flotilla create clusterset prod
  flotilla clusterset set prod --clusters cluster1,cluster2
  flotilla clusterset bind prod --namespace apps
  flotilla clusterset unbind prod --namespace apps`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("name what to do: flotilla clusterset set|bind|unbind SET ...")
			}
			return fmt.Errorf("flotilla clusterset does not know %q: it can set, bind or unbind", args[0])
		},
	}
	cmd.AddCommand(newClusterSetSetCommand(g), newClusterSetBindCommand(g), newClusterSetUnbindCommand(g))
	return cmd
}

type clusterSetSetOptions struct {
	*cmdutil.Globals
	clusters []string
}

func newClusterSetSetCommand(g *cmdutil.Globals) *cobra.Command {
	o := &clusterSetSetOptions{Globals: g}
	cmd := &cobra.Command{
		Use:   "set SET --clusters NAME[,NAME...]",
		Short: "Put clusters into a ManagedClusterSet",
		Long: `Label each cluster of --clusters with
cluster.open-cluster-management.io/clusterset=SET, which moves it out of
the set it was in. The hub allows that only to users who may create
managedclustersets/join for both sets. SET must exist and select its
members by that label (the default for sets).`,
		Example: `  flotilla clusterset set prod --clusters cluster1,cluster2
  # Back into the default set.
  flotilla clusterset set default --clusters cluster2`,
		Args: cmdutil.SetNameArg("flotilla clusterset set SET --clusters NAME[,NAME...]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.clusters = cmdutil.CleanClusterList(o.clusters)
			if err := cmdutil.ValidateClusterList(o.clusters); err != nil {
				return err
			}
			return o.run(cmd.Context(), args[0])
		},
	}
	cmd.Flags().StringSliceVar(&o.clusters, "clusters", nil, "names of the clusters to put into the set, comma separated")
	cmdutil.AliasClusterFlag(g, cmd)
	return cmd
}

func (o *clusterSetSetOptions) run(ctx context.Context, name string) error {
	c, err := o.ClientsFor(cmdutil.HubSide)
	if err != nil {
		return err
	}
	set := &clusterv1beta2.ManagedClusterSet{}
	if err := c.Ctrl.Get(ctx, client.ObjectKey{Name: name}, set); err != nil {
		if apierrors.IsNotFound(err) {
			return cmdutil.MissingSet(name, c.Where)
		}
		return cmdutil.ExplainClusterAPI(err, c, "get ManagedClusterSet "+name)
	}
	if t := set.Spec.ClusterSelector.SelectorType; t != "" && t != clusterv1beta2.ExclusiveClusterSetLabel {
		return fmt.Errorf("ManagedClusterSet %s selects its members by %s, not by the clusterset label: label the clusters to match its selector instead", name, t)
	}
	// Every cluster is checked before any is moved.
	for _, cluster := range o.clusters {
		if err := c.Ctrl.Get(ctx, client.ObjectKey{Name: cluster}, &clusterv1.ManagedCluster{}); err != nil {
			if apierrors.IsNotFound(err) {
				return fmt.Errorf("cluster %s does not exist on the hub (see `flotilla get clusters` for the names); no cluster was moved", cluster)
			}
			return cmdutil.ExplainClusterAPI(err, c, "get ManagedCluster "+cluster)
		}
	}
	for _, cluster := range o.clusters {
		from, err := labelIntoSet(ctx, c, cluster, name)
		if err != nil {
			return err
		}
		switch from {
		case name:
			fmt.Fprintf(o.Streams.Out, "Cluster %s is already in ManagedClusterSet %s.\n", cluster, name)
		case "":
			fmt.Fprintf(o.Streams.Out, "Cluster %s is now in ManagedClusterSet %s.\n", cluster, name)
		default:
			fmt.Fprintf(o.Streams.Out, "Cluster %s is now in ManagedClusterSet %s (was in %s).\n", cluster, name, from)
		}
	}
	return nil
}

// labelIntoSet sets the clusterset label of a cluster and returns its former value.
func labelIntoSet(ctx context.Context, c *cmdutil.Clients, cluster, set string) (from string, err error) {
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		mc := &clusterv1.ManagedCluster{}
		if err := c.Ctrl.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
			return err
		}
		from = mc.Labels[clusterv1beta2.ClusterSetLabel]
		if from == set {
			return nil
		}
		before := mc.DeepCopy()
		if mc.Labels == nil {
			mc.Labels = map[string]string{}
		}
		mc.Labels[clusterv1beta2.ClusterSetLabel] = set
		return c.Ctrl.Patch(ctx, mc, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	})
	if err != nil {
		if apierrors.IsForbidden(err) {
			return "", fmt.Errorf("the hub refused to move cluster %s into ManagedClusterSet %s: %w\n"+
				"Moving a cluster needs permission to create managedclustersets/join for its old and its new set", cluster, set, err)
		}
		return "", cmdutil.ExplainClusterAPI(err, c, fmt.Sprintf("label cluster %s into ManagedClusterSet %s", cluster, set))
	}
	return from, nil
}

type clusterSetBindOptions struct {
	*cmdutil.Globals
	namespace string
}

func (o *clusterSetBindOptions) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&o.namespace, "namespace", "n", "", "the namespace whose Placements may use the set (required)")
	_ = cmd.MarkFlagRequired("namespace")
}

func (o *clusterSetBindOptions) validate() error {
	if errs := validation.IsDNS1123Label(o.namespace); len(errs) > 0 {
		return fmt.Errorf("--namespace %q is not a valid namespace name: %s", o.namespace, strings.Join(errs, "; "))
	}
	return nil
}

func newClusterSetBindCommand(g *cmdutil.Globals) *cobra.Command {
	o := &clusterSetBindOptions{Globals: g}
	cmd := &cobra.Command{
		Use:   "bind SET --namespace NAMESPACE",
		Short: "Let the Placements of a namespace choose from a ManagedClusterSet",
		Long: `Create the ManagedClusterSetBinding SET in NAMESPACE (creating the namespace
if it does not exist), so that Placements there may choose clusters of
SET. The hub allows that only to users who may create
managedclustersets/bind for SET.`,
		Example: `  flotilla clusterset bind prod --namespace apps
  flotilla clusterset bind global -n ops`,
		Args: cmdutil.SetNameArg("flotilla clusterset bind SET --namespace NAMESPACE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return o.bind(cmd.Context(), args[0])
		},
	}
	o.addFlags(cmd)
	return cmd
}

func (o *clusterSetBindOptions) bind(ctx context.Context, name string) error {
	c, err := o.ClientsFor(cmdutil.HubSide)
	if err != nil {
		return err
	}
	if err := c.Ctrl.Get(ctx, client.ObjectKey{Name: name}, &clusterv1beta2.ManagedClusterSet{}); err != nil {
		if apierrors.IsNotFound(err) {
			return cmdutil.MissingSet(name, c.Where)
		}
		return cmdutil.ExplainClusterAPI(err, c, "get ManagedClusterSet "+name)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: o.namespace}}
	if err := c.Ctrl.Create(ctx, ns); err == nil {
		o.Notef("Hub: created namespace %s", o.namespace)
	} else if !apierrors.IsAlreadyExists(err) {
		return cmdutil.Explain(err, c.Where, "create namespace "+o.namespace)
	}
	binding := &clusterv1beta2.ManagedClusterSetBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: o.namespace, Name: name},
		Spec:       clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: name},
	}
	if err := c.Ctrl.Create(ctx, binding); err != nil {
		switch {
		case apierrors.IsAlreadyExists(err):
			fmt.Fprintf(o.Streams.Out, "ManagedClusterSet %s is already bound to namespace %s.\n", name, o.namespace)
			return nil
		case apierrors.IsForbidden(err):
			return fmt.Errorf("the hub refused to bind ManagedClusterSet %s to namespace %s: %w\n"+
				"Binding a set needs permission to create managedclustersets/bind for it", name, o.namespace, err)
		}
		return cmdutil.ExplainClusterAPI(err, c, fmt.Sprintf("create ManagedClusterSetBinding %s/%s", o.namespace, name))
	}
	fmt.Fprintf(o.Streams.Out, "ManagedClusterSet %s bound to namespace %s.\n", name, o.namespace)
	return nil
}

func newClusterSetUnbindCommand(g *cmdutil.Globals) *cobra.Command {
	o := &clusterSetBindOptions{Globals: g}
	cmd := &cobra.Command{
		Use:   "unbind SET --namespace NAMESPACE",
		Short: "Stop the Placements of a namespace from choosing from a ManagedClusterSet",
		Long: `Delete the ManagedClusterSetBinding SET in NAMESPACE. The Placements there
drop the clusters that they chose from SET only.`,
		Example: `  flotilla clusterset unbind prod --namespace apps`,
		Args:    cmdutil.SetNameArg("flotilla clusterset unbind SET --namespace NAMESPACE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return o.unbind(cmd.Context(), args[0])
		},
	}
	o.addFlags(cmd)
	return cmd
}

func (o *clusterSetBindOptions) unbind(ctx context.Context, name string) error {
	c, err := o.ClientsFor(cmdutil.HubSide)
	if err != nil {
		return err
	}
	binding := &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: o.namespace, Name: name}}
	if err := c.Ctrl.Delete(ctx, binding); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("ManagedClusterSet %s is not bound to namespace %s (see `flotilla get clustersets %s`)", name, o.namespace, name)
		}
		return cmdutil.ExplainClusterAPI(err, c, fmt.Sprintf("delete ManagedClusterSetBinding %s/%s", o.namespace, name))
	}
	fmt.Fprintf(o.Streams.Out, "ManagedClusterSet %s unbound from namespace %s.\n", name, o.namespace)
	return nil
}
