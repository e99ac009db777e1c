package get

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/cli/cmdutil/workview"
)

type getWorksOptions struct {
	*cmdutil.Globals
	clusters    []string
	output      string
	namespace   string
	replicaSets bool
}

func newGetWorksCommand(g *cmdutil.Globals) *cobra.Command {
	o := &getWorksOptions{Globals: g}
	cmd := &cobra.Command{
		Use:     "works [NAME] [--clusters NAME[,NAME...] | --replicasets [-n NAMESPACE]]",
		Aliases: []string{"work", "manifestworks", "manifestwork", "mw"},
		Short:   "Show ManifestWorks and ManifestWorkReplicaSets, how their clusters applied them, and rollout progress",
		Long: `Show the ManifestWorks of some clusters (--clusters), or of every cluster,
or only those named NAME.

Without --clusters, the ManifestWorkReplicaSets (of -n NAMESPACE, else of
every namespace) come first, one row each: its Placements, how many
clusters they chose, how many of its ManifestWorks have the current spec
(UPDATED) and are Applied, Available and Degraded, and where its rollout
stands (ROLLOUT): "Progressing 2/3" (clusters running the current spec, of
those chosen), "Complete", or "Stopped: cluster2 failed" when a progressive
rollout holds the other clusters back because too many failed. --replicasets
shows only them; "flotilla describe work NAME -n NAMESPACE" shows each
cluster of one.

Each work has a row with its conditions as the cluster's agent reported
them (Applied, Available, Degraded; "-" until reported), followed by one
indented row per manifest: the object's kind, namespace and name, its own
conditions, its status feedback (e.g. AvailableReplicas=1), other
conditions that are not in their normal state, and how often the agent put
the object back after it had been changed on the cluster (drift).

-o wide adds Progressing, API versions and the messages of failing
conditions (for replica sets: rollout strategies and the hub's messages).
-o json and -o yaml print what the table shows: without --clusters, a v1
List of the ManifestWorkReplicaSets followed by the ManifestWorks; with
--clusters a ManifestWorkList; with --replicasets a
ManifestWorkReplicaSetList. NAME on one cluster (--clusters C), or with
--replicasets -n NAMESPACE, prints the object itself, as kubectl does.`,
		Example: `  flotilla get works --clusters cluster1
  flotilla get works hello --clusters cluster1,cluster2 -o wide
  flotilla get works hello -o yaml
  flotilla get works hello --clusters cluster1 -o json
  flotilla get works --replicasets -n apps
  flotilla get works hello --replicasets -n apps -o yaml`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return fmt.Errorf("name at most one ManifestWork (got %d): flotilla get works [NAME] [--clusters NAME[,NAME...]]", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckOutput(o.output, cmdutil.OutputWide, cmdutil.OutputJSON, cmdutil.OutputYAML); err != nil {
				return err
			}
			o.clusters = cmdutil.CleanClusterList(o.clusters)
			if o.replicaSets && len(o.clusters) > 0 {
				return errors.New("--clusters and --replicasets exclude each other: a ManifestWorkReplicaSet spans clusters (see flotilla describe work NAME -n NAMESPACE for each of its clusters)")
			}
			if o.namespace != "" && len(o.clusters) > 0 {
				return errors.New("-n selects ManifestWorkReplicaSets by namespace; the ManifestWorks of clusters are selected by --clusters: give one of them")
			}
			for _, n := range o.clusters {
				if err := cmdutil.ValidateClusterName(n); err != nil {
					return fmt.Errorf("--clusters: %w", err)
				}
			}
			var name string
			if len(args) == 1 {
				name = args[0]
			}
			return o.run(cmd.Context(), name)
		},
	}
	cmd.Flags().BoolVar(&o.replicaSets, "replicasets", false, "show only ManifestWorkReplicaSets")
	cmd.Flags().StringVarP(&o.namespace, "namespace", "n", "", "the namespace whose ManifestWorkReplicaSets to show (default: every namespace)")
	cmdutil.AddClustersFlag(g, cmd, &o.clusters, "the clusters whose ManifestWorks to show, comma separated (default: every cluster)")
	cmd.ValidArgsFunction = cmdutil.CompleteWorkNames(g, &o.clusters, &o.namespace)
	cmdutil.AddOutputFlag(cmd, &o.output, cmdutil.OutputWide, cmdutil.OutputJSON, cmdutil.OutputYAML)
	return cmd
}

func (o *getWorksOptions) run(ctx context.Context, name string) error {
	c, err := o.ClientsFor(cmdutil.HubSide)
	if err != nil {
		return err
	}
	var replicaSets []workv1alpha1.ManifestWorkReplicaSet
	if len(o.clusters) == 0 {
		if replicaSets, err = workview.ListReplicaSets(ctx, c, o.namespace, name); err != nil {
			return err
		}
	}
	if o.replicaSets {
		return o.printReplicaSets(ctx, c, name, replicaSets)
	}
	list, err := o.list(ctx, c, name)
	if err != nil {
		return err
	}
	slices.SortFunc(list.Items, func(a, b workv1.ManifestWork) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	if name != "" && len(replicaSets) == 0 && len(list.Items) == 0 {
		if len(o.clusters) > 0 {
			cl := strings.Join(o.clusters, ",")
			return fmt.Errorf("ManifestWork %s not found in cluster %s (see `flotilla get works --clusters %s`)", name, cl, cl)
		}
		return fmt.Errorf("no cluster has a ManifestWork named %s (see `flotilla get works`)", name)
	}
	switch o.output {
	case cmdutil.OutputJSON, cmdutil.OutputYAML:
		return o.printData(name, replicaSets, list.Items)
	}
	if len(replicaSets) > 0 {
		if err := o.printReplicaSets(ctx, c, name, replicaSets); err != nil {
			return err
		}
		if len(list.Items) == 0 {
			return nil
		}
		fmt.Fprintln(o.Streams.Out)
	}
	if len(list.Items) == 0 {
		if len(o.clusters) > 0 {
			cl := strings.Join(o.clusters, ",")
			o.Notef("No ManifestWorks in cluster %s: create one with `flotilla create work NAME -f FILE --clusters %s`.", cl, cl)
		} else {
			o.Notef("No ManifestWorks yet: create one with `flotilla create work NAME -f FILE --clusters NAME`.")
		}
		return nil
	}
	header, rows := workview.WorkTable(list.Items, time.Now(), o.output == cmdutil.OutputWide, len(o.clusters) != 1)
	return cmdutil.PrintTable(o.Streams.Out, header, rows)
}

// printData prints what the table shows, as -o json|yaml: with --clusters
// the clusters' ManifestWorks (the object itself for a NAME on one
// cluster), else the ManifestWorkReplicaSets and the ManifestWorks of
// every cluster in one v1 List, replica sets first, as the table has them.
func (o *getWorksOptions) printData(name string, sets []workv1alpha1.ManifestWorkReplicaSet, works []workv1.ManifestWork) error {
	workGVK := workv1.GroupVersion.WithKind("ManifestWork")
	objs := cmdutil.AsFound(works, workGVK)
	if len(o.clusters) > 0 {
		return cmdutil.PrintFound(o.Streams.Out, o.output, objs, cmdutil.ListKind(workGVK), name != "" && len(o.clusters) == 1)
	}
	objs = append(cmdutil.AsFound(sets, workv1alpha1.GroupVersion.WithKind("ManifestWorkReplicaSet")), objs...)
	return cmdutil.PrintFound(o.Streams.Out, o.output, objs, cmdutil.MixedList, false)
}

// printReplicaSets prints replica sets as a table with their rollout
// progress, or as -o json|yaml: a ManifestWorkReplicaSetList, or the
// object itself for a NAME in a namespace (-n).
func (o *getWorksOptions) printReplicaSets(ctx context.Context, c *cmdutil.Clients, name string, items []workv1alpha1.ManifestWorkReplicaSet) error {
	if name != "" && len(items) == 0 {
		return fmt.Errorf("no ManifestWorkReplicaSet named %s%s (see `flotilla get works --replicasets`)", name, inNamespace(o.namespace))
	}
	switch o.output {
	case cmdutil.OutputJSON, cmdutil.OutputYAML:
		gvk := workv1alpha1.GroupVersion.WithKind("ManifestWorkReplicaSet")
		return cmdutil.PrintFound(o.Streams.Out, o.output, cmdutil.AsFound(items, gvk), cmdutil.ListKind(gvk), name != "" && o.namespace != "")
	}
	if len(items) == 0 {
		o.Notef("No ManifestWorkReplicaSets%s: create one with `flotilla create work NAME -f FILE --placement NAMESPACE/PLACEMENT`.", inNamespace(o.namespace))
		return nil
	}
	now := time.Now()
	views, err := workview.ReplicaSetViews(ctx, c, items, now)
	if err != nil {
		return err
	}
	header, rows := workview.ReplicaSetTable(views, now, o.output == cmdutil.OutputWide)
	return cmdutil.PrintTable(o.Streams.Out, header, rows)
}

// inNamespace is " in namespace NS", or nothing for every namespace.
func inNamespace(ns string) string {
	if ns == "" {
		return ""
	}
	return " in namespace " + ns
}

// list gets the works asked for; a cluster of --clusters that does not
// exist is an error rather than an empty list.
func (o *getWorksOptions) list(ctx context.Context, c *cmdutil.Clients, name string) (*workv1.ManifestWorkList, error) {
	list := &workv1.ManifestWorkList{}
	if len(o.clusters) == 0 {
		var opts []client.ListOption
		if name != "" {
			opts = append(opts, client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", name)})
		}
		if err := c.Ctrl.List(ctx, list, opts...); err != nil {
			return nil, cmdutil.ExplainClusterAPI(err, c, "list ManifestWorks")
		}
		return list, nil
	}
	for _, cluster := range o.clusters {
		if err := c.Ctrl.Get(ctx, client.ObjectKey{Name: cluster}, &clusterv1.ManagedCluster{}); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("cluster %s does not exist on the hub (see `flotilla get clusters` for the names)", cluster)
			}
			return nil, cmdutil.ExplainClusterAPI(err, c, "get ManagedCluster "+cluster)
		}
		if name == "" {
			one := &workv1.ManifestWorkList{}
			if err := c.Ctrl.List(ctx, one, client.InNamespace(cluster)); err != nil {
				return nil, cmdutil.ExplainClusterAPI(err, c, "list the ManifestWorks of cluster "+cluster)
			}
			list.Items = append(list.Items, one.Items...)
			continue
		}
		mw := workv1.ManifestWork{}
		if err := c.Ctrl.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, &mw); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, cmdutil.ExplainClusterAPI(err, c, fmt.Sprintf("get ManifestWork %s/%s", cluster, name))
		}
		list.Items = append(list.Items, mw)
	}
	return list, nil
}
