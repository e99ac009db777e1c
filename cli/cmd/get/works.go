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
conditions (for replica sets: rollout strategies and the hub's messages);
-o json and -o yaml print the ManifestWork objects, or with --replicasets
the ManifestWorkReplicaSet objects.`,
		Example: `  flotilla get works --clusters cluster1
  flotilla get works hello --clusters cluster1,cluster2 -o wide
  flotilla get works hello -o yaml
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

	switch o.output {
	case cmdutil.OutputJSON, cmdutil.OutputYAML:
		list.APIVersion, list.Kind = workv1.GroupVersion.String(), "ManifestWorkList"
		list.ResourceVersion, list.Continue = "", ""
		for i := range list.Items {
			list.Items[i].APIVersion, list.Items[i].Kind = workv1.GroupVersion.String(), "ManifestWork"
			list.Items[i].ManagedFields = nil
		}
		return cmdutil.PrintData(o.Streams.Out, o.output, list)
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
		switch {
		case name != "" && len(o.clusters) > 0:
			cl := strings.Join(o.clusters, ",")
			return fmt.Errorf("ManifestWork %s not found in cluster %s (see `flotilla get works --clusters %s`)", name, cl, cl)
		case name != "":
			return fmt.Errorf("no cluster has a ManifestWork named %s (see `flotilla get works`)", name)
		case len(o.clusters) > 0:
			cl := strings.Join(o.clusters, ",")
			o.Notef("No ManifestWorks in cluster %s: create one with `flotilla create work NAME -f FILE --clusters %s`.", cl, cl)
		default:
			o.Notef("No ManifestWorks yet: create one with `flotilla create work NAME -f FILE --clusters NAME`.")
		}
		return nil
	}
	header, rows := workview.WorkTable(list.Items, time.Now(), o.output == cmdutil.OutputWide, len(o.clusters) != 1)
	return cmdutil.PrintTable(o.Streams.Out, header, rows)
}

// printReplicaSets prints replica sets as a table with their rollout
// progress, or as a ManifestWorkReplicaSetList.
func (o *getWorksOptions) printReplicaSets(ctx context.Context, c *cmdutil.Clients, name string, items []workv1alpha1.ManifestWorkReplicaSet) error {
	switch o.output {
	case cmdutil.OutputJSON, cmdutil.OutputYAML:
		list := &workv1alpha1.ManifestWorkReplicaSetList{Items: items}
		list.APIVersion, list.Kind = workv1alpha1.GroupVersion.String(), "ManifestWorkReplicaSetList"
		for i := range list.Items {
			list.Items[i].APIVersion, list.Items[i].Kind = workv1alpha1.GroupVersion.String(), "ManifestWorkReplicaSet"
			list.Items[i].ManagedFields = nil
		}
		if list.Items == nil {
			list.Items = []workv1alpha1.ManifestWorkReplicaSet{}
		}
		return cmdutil.PrintData(o.Streams.Out, o.output, list)
	}
	if len(items) == 0 {
		switch {
		case name != "":
			return fmt.Errorf("no ManifestWorkReplicaSet named %s%s (see `flotilla get works --replicasets`)", name, inNamespace(o.namespace))
		default:
			o.Notef("No ManifestWorkReplicaSets%s: create one with `flotilla create work NAME -f FILE --placement NAMESPACE/PLACEMENT`.", inNamespace(o.namespace))
		}
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
