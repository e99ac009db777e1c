package describe

import (
	"context"
	"errors"
	"fmt"
	"io"
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

// withWorkDescribe adds `describe work` to the describe command.
func withWorkDescribe(g *cmdutil.Globals, describe *cobra.Command) *cobra.Command {
	var namespace, output string
	var clusters []string
	cmd := &cobra.Command{
		Use:     "work NAME [-n NAMESPACE | --clusters NAME[,NAME...]]",
		Aliases: []string{"works", "manifestwork", "manifestworkreplicaset", "mw", "mwrs"},
		Short:   "Show a ManifestWorkReplicaSet and where each of its clusters stands in the rollout, or a ManifestWork of a cluster",
		Long: `With -n, show ManifestWorkReplicaSet NAME of NAMESPACE: its Placements and
rollout strategies, its overrides and replica division, the hub's
conditions, and one row per chosen cluster with its state in the rollout:
  Pending    no ManifestWork yet, or one with the previous spec: its turn has not come
  Applying   it has the current spec; its agent has not reported it applied and available
  Available  its agent reports the current spec applied and available
  Failed     it reports the work Degraded, or was not available within progressDeadline
REPLICAS and IMAGES are what the cluster's ManifestWork holds (for a
Pending cluster, the previous spec; its MESSAGE says what it gets next).

With --clusters, show ManifestWork NAME of each cluster named: what owns
it, its conditions, and each resource it applied with its own conditions
and status feedback.

With neither, NAME is looked up: a ManifestWorkReplicaSet of that name
in any namespace, or ManifestWorks of that name that no replica set owns.

-o json and -o yaml print the same as data: for a replica set, the
ManifestWorkReplicaSet, the rollout, and each cluster's state, replicas,
images, message and ManifestWork; for a ManifestWork, the object.`,
		Example: `  flotilla describe work hello -n apps
  flotilla describe work hello --clusters cluster1
  flotilla describe work hello -n apps -o json | jq -r '.clusters[] | select(.state == "Failed") | .cluster'`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("name one ManifestWorkReplicaSet or ManifestWork (got %d): flotilla describe work NAME [-n NAMESPACE | --clusters NAME]", len(args))
			}
			clusters = cmdutil.CleanClusterList(clusters)
			if namespace != "" && len(clusters) > 0 {
				return errors.New("-n and --clusters exclude each other: -n describes a ManifestWorkReplicaSet, --clusters the ManifestWork of each cluster named")
			}
			for _, n := range clusters {
				if err := cmdutil.ValidateClusterName(n); err != nil {
					return fmt.Errorf("--clusters: %w", err)
				}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckOutput(output, cmdutil.OutputJSON, cmdutil.OutputYAML); err != nil {
				return err
			}
			c, err := g.ClientsFor(cmdutil.HubSide)
			if err != nil {
				return err
			}
			d := workDescriber{c: c, out: g.Streams.Out, output: output}
			ctx, name := cmd.Context(), args[0]
			switch {
			case namespace != "":
				return d.replicaSet(ctx, client.ObjectKey{Namespace: namespace, Name: name})
			case len(clusters) > 0:
				return d.works(ctx, name, clusters)
			}
			return d.lookUp(ctx, name)
		},
	}
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "", "the namespace of the ManifestWorkReplicaSet")
	cmdutil.AddClustersFlag(g, cmd, &clusters, "the clusters whose ManifestWork NAME to show, comma separated")
	cmd.ValidArgsFunction = cmdutil.CompleteWorkNames(g, &clusters, &namespace)
	cmdutil.AddOutputFlag(cmd, &output, cmdutil.OutputJSON, cmdutil.OutputYAML)
	describe.AddCommand(cmd)
	return describe
}

// workDescriber prints what `describe work` shows.
type workDescriber struct {
	c      *cmdutil.Clients
	out    io.Writer
	output string
}

func (d workDescriber) replicaSet(ctx context.Context, key client.ObjectKey) error {
	rs := &workv1alpha1.ManifestWorkReplicaSet{}
	if err := d.c.Ctrl.Get(ctx, key, rs); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("ManifestWorkReplicaSet %s not found in namespace %s (see `flotilla get works --replicasets -n %s`; the ManifestWork of a cluster is shown by `flotilla describe work %s --clusters CLUSTER`)", key.Name, key.Namespace, key.Namespace, key.Name)
		}
		return cmdutil.ExplainClusterAPI(err, d.c, "get ManifestWorkReplicaSet "+key.String())
	}
	v, err := workview.LoadReplicaSetView(ctx, d.c, rs, time.Now())
	if err != nil {
		return err
	}
	if d.output != cmdutil.OutputText {
		return cmdutil.PrintData(d.out, d.output, v.Data())
	}
	return workview.WriteReplicaSetDescription(d.out, v)
}

func (d workDescriber) works(ctx context.Context, name string, clusters []string) error {
	var found []*workv1.ManifestWork
	for _, cluster := range clusters {
		mw := &workv1.ManifestWork{}
		if err := d.c.Ctrl.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, mw); err != nil {
			if !apierrors.IsNotFound(err) {
				return cmdutil.ExplainClusterAPI(err, d.c, fmt.Sprintf("get ManifestWork %s/%s", cluster, name))
			}
			if err := d.c.Ctrl.Get(ctx, client.ObjectKey{Name: cluster}, &clusterv1.ManagedCluster{}); apierrors.IsNotFound(err) {
				return fmt.Errorf("cluster %s does not exist on the hub (see `flotilla get clusters` for the names)", cluster)
			}
			return fmt.Errorf("ManifestWork %s not found in cluster %s (see `flotilla get works --clusters %s`)", name, cluster, cluster)
		}
		found = append(found, mw)
	}
	return d.printWorks(found)
}

func (d workDescriber) printWorks(found []*workv1.ManifestWork) error {
	now := time.Now()
	for i, mw := range found {
		if d.output != cmdutil.OutputText {
			mw.APIVersion, mw.Kind, mw.ManagedFields = workv1.GroupVersion.String(), "ManifestWork", nil
			if len(found) == 1 {
				return cmdutil.PrintData(d.out, d.output, mw)
			}
			continue
		}
		if i > 0 {
			fmt.Fprintln(d.out)
		}
		if err := writeManifestWorkDescription(d.out, mw, now); err != nil {
			return err
		}
	}
	if d.output != cmdutil.OutputText {
		list := &workv1.ManifestWorkList{}
		list.APIVersion, list.Kind = workv1.GroupVersion.String(), "ManifestWorkList"
		for _, mw := range found {
			list.Items = append(list.Items, *mw)
		}
		return cmdutil.PrintData(d.out, d.output, list)
	}
	return nil
}

// lookUp describes what NAME is when neither -n nor --clusters says: the
// one replica set of that name, else the ManifestWorks of that name that
// no replica set owns; it asks which when several match.
func (d workDescriber) lookUp(ctx context.Context, name string) error {
	sets, err := workview.ListReplicaSets(ctx, d.c, "", name)
	if err != nil {
		return err
	}
	works := &workv1.ManifestWorkList{}
	if err := d.c.Ctrl.List(ctx, works, client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", name)}); err != nil {
		return cmdutil.ExplainClusterAPI(err, d.c, "list ManifestWorks named "+name)
	}
	var single []*workv1.ManifestWork
	for i := range works.Items {
		if works.Items[i].Labels[workv1.ManifestWorkReplicaSetLabel] == "" {
			single = append(single, &works.Items[i])
		}
	}
	switch {
	case len(sets) == 1 && len(single) == 0:
		return d.replicaSet(ctx, client.ObjectKeyFromObject(&sets[0]))
	case len(sets) == 0 && len(single) > 0:
		return d.printWorks(single)
	case len(sets) == 0:
		return fmt.Errorf("no ManifestWorkReplicaSet or ManifestWork is named %s (see `flotilla get works`)", name)
	}
	var which []string
	for _, rs := range sets {
		which = append(which, fmt.Sprintf("flotilla describe work %s -n %s", name, rs.Namespace))
	}
	for _, mw := range single {
		which = append(which, fmt.Sprintf("flotilla describe work %s --clusters %s", name, mw.Namespace))
	}
	return fmt.Errorf("several objects are named %s; say which:\n  %s", name, strings.Join(which, "\n  "))
}
