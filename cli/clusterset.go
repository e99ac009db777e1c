package cli

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
)

// newClusterSetCommand is `flotilla clusterset`: membership and bindings.
func newClusterSetCommand(g *globalOptions) *cobra.Command {
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

// setNameArg checks the one SET argument.
func setNameArg(usage string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 {
			return fmt.Errorf("name one ManagedClusterSet: %s (got %d arguments)", usage, len(args))
		}
		return validateSetName(args[0])
	}
}

// validateSetName requires what the clusterset label value allows.
func validateSetName(name string) error {
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return fmt.Errorf("%q is not a valid ManagedClusterSet name: %s", name, strings.Join(errs, "; "))
	}
	return nil
}

type createClusterSetOptions struct {
	*globalOptions
	selector string
}

func newCreateClusterSetCommand(g *globalOptions) *cobra.Command {
	o := &createClusterSetOptions{globalOptions: g}
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
		Args: setNameArg("flotilla create clusterset NAME"),
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
		sel, err := parseLabelSelector("--selector", o.selector)
		if err != nil {
			return err
		}
		set.Spec.ClusterSelector = clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.LabelSelector, LabelSelector: sel}
	}
	c, err := o.clientsFor(hubSide)
	if err != nil {
		return err
	}
	if err := c.ctrl.Create(ctx, set); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("ManagedClusterSet %s already exists on %s (see `flotilla get clustersets %s`)", name, c.where, name)
		}
		return explainClusterAPI(err, c, "create ManagedClusterSet "+name)
	}
	if o.selector != "" {
		fmt.Fprintf(o.streams.Out, "ManagedClusterSet %s created: its members are the clusters matching %s.\n", name, o.selector)
	} else {
		fmt.Fprintf(o.streams.Out, "ManagedClusterSet %s created. Put clusters in with `flotilla clusterset set %s --clusters NAME[,NAME...]`.\n", name, name)
	}
	o.notef("Bind it to a namespace for its Placements: `flotilla clusterset bind %s --namespace NAMESPACE`", name)
	return nil
}

type clusterSetSetOptions struct {
	*globalOptions
	clusters []string
}

func newClusterSetSetCommand(g *globalOptions) *cobra.Command {
	o := &clusterSetSetOptions{globalOptions: g}
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
		Args: setNameArg("flotilla clusterset set SET --clusters NAME[,NAME...]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.clusters = cleanClusterList(o.clusters)
			if err := validateClusterList(o.clusters); err != nil {
				return err
			}
			return o.run(cmd.Context(), args[0])
		},
	}
	cmd.Flags().StringSliceVar(&o.clusters, "clusters", nil, "names of the clusters to put into the set, comma separated")
	aliasClusterFlag(g, cmd)
	return cmd
}

func (o *clusterSetSetOptions) run(ctx context.Context, name string) error {
	c, err := o.clientsFor(hubSide)
	if err != nil {
		return err
	}
	set := &clusterv1beta2.ManagedClusterSet{}
	if err := c.ctrl.Get(ctx, client.ObjectKey{Name: name}, set); err != nil {
		if apierrors.IsNotFound(err) {
			return missingSet(name, c.where)
		}
		return explainClusterAPI(err, c, "get ManagedClusterSet "+name)
	}
	if t := set.Spec.ClusterSelector.SelectorType; t != "" && t != clusterv1beta2.ExclusiveClusterSetLabel {
		return fmt.Errorf("ManagedClusterSet %s selects its members by %s, not by the clusterset label: label the clusters to match its selector instead", name, t)
	}
	// Every cluster is checked before any is moved.
	for _, cluster := range o.clusters {
		if err := c.ctrl.Get(ctx, client.ObjectKey{Name: cluster}, &clusterv1.ManagedCluster{}); err != nil {
			if apierrors.IsNotFound(err) {
				return fmt.Errorf("cluster %s does not exist on the hub (see `flotilla get clusters` for the names); no cluster was moved", cluster)
			}
			return explainClusterAPI(err, c, "get ManagedCluster "+cluster)
		}
	}
	for _, cluster := range o.clusters {
		from, err := labelIntoSet(ctx, c, cluster, name)
		if err != nil {
			return err
		}
		switch from {
		case name:
			fmt.Fprintf(o.streams.Out, "Cluster %s is already in ManagedClusterSet %s.\n", cluster, name)
		case "":
			fmt.Fprintf(o.streams.Out, "Cluster %s is now in ManagedClusterSet %s.\n", cluster, name)
		default:
			fmt.Fprintf(o.streams.Out, "Cluster %s is now in ManagedClusterSet %s (was in %s).\n", cluster, name, from)
		}
	}
	return nil
}

// labelIntoSet sets the clusterset label of a cluster and returns its former value.
func labelIntoSet(ctx context.Context, c *clients, cluster, set string) (from string, err error) {
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		mc := &clusterv1.ManagedCluster{}
		if err := c.ctrl.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
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
		return c.ctrl.Patch(ctx, mc, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	})
	if err != nil {
		if apierrors.IsForbidden(err) {
			return "", fmt.Errorf("the hub refused to move cluster %s into ManagedClusterSet %s: %w\n"+
				"Moving a cluster needs permission to create managedclustersets/join for its old and its new set", cluster, set, err)
		}
		return "", explainClusterAPI(err, c, fmt.Sprintf("label cluster %s into ManagedClusterSet %s", cluster, set))
	}
	return from, nil
}

type clusterSetBindOptions struct {
	*globalOptions
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

func newClusterSetBindCommand(g *globalOptions) *cobra.Command {
	o := &clusterSetBindOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "bind SET --namespace NAMESPACE",
		Short: "Let the Placements of a namespace choose from a ManagedClusterSet",
		Long: `Create the ManagedClusterSetBinding SET in NAMESPACE (creating the namespace
if it does not exist), so that Placements there may choose clusters of
SET. The hub allows that only to users who may create
managedclustersets/bind for SET.`,
		Example: `  flotilla clusterset bind prod --namespace apps
  flotilla clusterset bind global -n ops`,
		Args: setNameArg("flotilla clusterset bind SET --namespace NAMESPACE"),
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
	c, err := o.clientsFor(hubSide)
	if err != nil {
		return err
	}
	if err := c.ctrl.Get(ctx, client.ObjectKey{Name: name}, &clusterv1beta2.ManagedClusterSet{}); err != nil {
		if apierrors.IsNotFound(err) {
			return missingSet(name, c.where)
		}
		return explainClusterAPI(err, c, "get ManagedClusterSet "+name)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: o.namespace}}
	if err := c.ctrl.Create(ctx, ns); err == nil {
		o.notef("Hub: created namespace %s", o.namespace)
	} else if !apierrors.IsAlreadyExists(err) {
		return explain(err, c.where, "create namespace "+o.namespace)
	}
	binding := &clusterv1beta2.ManagedClusterSetBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: o.namespace, Name: name},
		Spec:       clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: name},
	}
	if err := c.ctrl.Create(ctx, binding); err != nil {
		switch {
		case apierrors.IsAlreadyExists(err):
			fmt.Fprintf(o.streams.Out, "ManagedClusterSet %s is already bound to namespace %s.\n", name, o.namespace)
			return nil
		case apierrors.IsForbidden(err):
			return fmt.Errorf("the hub refused to bind ManagedClusterSet %s to namespace %s: %w\n"+
				"Binding a set needs permission to create managedclustersets/bind for it", name, o.namespace, err)
		}
		return explainClusterAPI(err, c, fmt.Sprintf("create ManagedClusterSetBinding %s/%s", o.namespace, name))
	}
	fmt.Fprintf(o.streams.Out, "ManagedClusterSet %s bound to namespace %s.\n", name, o.namespace)
	return nil
}

// missingSet is the error for binding set name, which does not exist.
// The hub makes the sets it keeps itself, at start: those are never the
// user's to create.
func missingSet(name, where string) error {
	switch name {
	case clusterv1beta2.DefaultManagedClusterSetName, clusterv1beta2.GlobalManagedClusterSetName:
		return fmt.Errorf("ManagedClusterSet %s does not exist on %s, although the hub creates it when it starts: "+
			"check that flotilla-hub runs against this API server and has said that it is ready, then bind again", name, where)
	}
	return fmt.Errorf("ManagedClusterSet %s does not exist on %s: create it with `flotilla create clusterset %s`", name, where, name)
}

func newClusterSetUnbindCommand(g *globalOptions) *cobra.Command {
	o := &clusterSetBindOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "unbind SET --namespace NAMESPACE",
		Short: "Stop the Placements of a namespace from choosing from a ManagedClusterSet",
		Long: `Delete the ManagedClusterSetBinding SET in NAMESPACE. The Placements there
drop the clusters that they chose from SET only.`,
		Example: `  flotilla clusterset unbind prod --namespace apps`,
		Args:    setNameArg("flotilla clusterset unbind SET --namespace NAMESPACE"),
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
	c, err := o.clientsFor(hubSide)
	if err != nil {
		return err
	}
	binding := &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: o.namespace, Name: name}}
	if err := c.ctrl.Delete(ctx, binding); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("ManagedClusterSet %s is not bound to namespace %s (see `flotilla get clustersets %s`)", name, o.namespace, name)
		}
		return explainClusterAPI(err, c, fmt.Sprintf("delete ManagedClusterSetBinding %s/%s", o.namespace, name))
	}
	fmt.Fprintf(o.streams.Out, "ManagedClusterSet %s unbound from namespace %s.\n", name, o.namespace)
	return nil
}

// withPlacementGets adds `get clustersets` and `get placements` to the get command.
func withPlacementGets(g *globalOptions, get *cobra.Command) *cobra.Command {
	get.AddCommand(newGetClusterSetsCommand(g), newGetPlacementsCommand(g))
	return get
}

// withPlacementCreates adds `create clusterset` and `create placement` to the create command.
func withPlacementCreates(g *globalOptions, create *cobra.Command) *cobra.Command {
	create.AddCommand(newCreateClusterSetCommand(g), newCreatePlacementCommand(g))
	return create
}
