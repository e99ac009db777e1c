package delete

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
)

// NewCommand returns `flotilla delete`, with its kind work.
func NewCommand(g *cmdutil.Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "delete KIND NAME",
		Short: "Delete objects from the hub",
		Long:  "Delete objects from the hub: ManifestWorks, whose agents then remove what they applied, and ManifestWorkReplicaSets with their ManifestWorks.",
		Example: `  flotilla delete work hello --clusters cluster1 --wait
  flotilla delete work hello -n apps --wait`,
		RunE: cmdutil.RunKindVerb,
	}
	cmd.AddCommand(newDeleteWorkCommand(g))
	return cmd
}

type deleteWorkOptions struct {
	*cmdutil.Globals
	clusters  []string
	namespace string
	wait      bool
	timeout   time.Duration
}

func newDeleteWorkCommand(g *cmdutil.Globals) *cobra.Command {
	o := &deleteWorkOptions{Globals: g}
	cmd := &cobra.Command{
		Use:     "work NAME (--clusters NAME[,NAME...] | -n NAMESPACE)",
		Aliases: []string{"works", "manifestwork", "mw"},
		Short:   "Delete a ManifestWork (its cluster's agent removes what it applied) or a ManifestWorkReplicaSet",
		Long: `Delete ManifestWork NAME of each cluster of --clusters, or with -n the
ManifestWorkReplicaSet NAME of NAMESPACE: the hub then deletes its
ManifestWork in every cluster. A ManifestWork that a replica set keeps is
not deleted alone, as the hub would create it again.

The ManifestWork stays, marked for deletion, until the cluster's agent has
removed the objects it applied (all of them, unless the work's
spec.deleteOption orphans some) and released the work. With --wait, delete
waits for that; while the cluster is unavailable, the work waits for its
agent to come back.`,
		Example: `  flotilla delete work hello --clusters cluster1
  flotilla delete work hello --clusters cluster1,cluster2 --wait --timeout 2m
  flotilla delete work hello -n apps --wait`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("name the ManifestWork: flotilla delete work NAME (--clusters NAME[,NAME...] | -n NAMESPACE) (got %d arguments)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.timeout <= 0 {
				return fmt.Errorf("--timeout %s must be positive", o.timeout)
			}
			o.clusters = cmdutil.CleanClusterList(o.clusters)
			if o.namespace != "" {
				if len(o.clusters) > 0 {
					return errors.New("--clusters and -n exclude each other: --clusters deletes the ManifestWork of each cluster named, -n a ManifestWorkReplicaSet with its ManifestWorks")
				}
				return o.runReplicaSet(cmd.Context(), args[0])
			}
			if len(o.clusters) == 0 {
				return errors.New("--clusters is required: the clusters whose ManifestWork to delete, e.g. --clusters cluster1 (or -n NAMESPACE for a ManifestWorkReplicaSet)")
			}
			for _, n := range o.clusters {
				if err := cmdutil.ValidateClusterName(n); err != nil {
					return fmt.Errorf("--clusters: %w", err)
				}
			}
			c, err := o.ClientsFor(cmdutil.HubSide)
			if err != nil {
				return err
			}
			var errs []error
			for _, cluster := range o.clusters {
				errs = append(errs, o.run(cmd.Context(), c, cluster, args[0]))
			}
			return errors.Join(errs...)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.namespace, "namespace", "n", "", "the namespace of the ManifestWorkReplicaSet to delete")
	f.BoolVar(&o.wait, "wait", false, "wait until the agent has removed what the work applied and the work is gone")
	f.DurationVar(&o.timeout, "timeout", cmdutil.DefaultWaitTimeout, "how long --wait waits")
	cmdutil.AddClustersFlag(g, cmd, &o.clusters, "the clusters whose ManifestWork to delete, comma separated")
	cmd.ValidArgsFunction = cmdutil.CompleteWorkNames(g, &o.clusters, &o.namespace)
	return cmd
}

func (o *deleteWorkOptions) run(ctx context.Context, c *cmdutil.Clients, cluster, name string) error {
	mw := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name}}
	if err := c.Ctrl.Get(ctx, client.ObjectKeyFromObject(mw), mw); err == nil {
		ns, rs, owned := strings.Cut(mw.Labels[workv1.ManifestWorkReplicaSetLabel], ".")
		if owned && c.Ctrl.Get(ctx, client.ObjectKey{Namespace: ns, Name: rs}, &workv1alpha1.ManifestWorkReplicaSet{}) == nil {
			return fmt.Errorf("ManifestWork %s of cluster %s belongs to ManifestWorkReplicaSet %s/%s, which would create it again: delete the replica set (flotilla delete work %s -n %s), or change its Placement so that it no longer chooses %s",
				name, cluster, ns, rs, rs, ns, cluster)
		}
	}
	if err := c.Ctrl.Delete(ctx, mw); err != nil {
		if apierrors.IsNotFound(err) {
			if err := c.Ctrl.Get(ctx, client.ObjectKey{Name: cluster}, &clusterv1.ManagedCluster{}); apierrors.IsNotFound(err) {
				return fmt.Errorf("cluster %s does not exist on the hub (see `flotilla get clusters` for the names)", cluster)
			}
			return fmt.Errorf("ManifestWork %s not found in cluster %s (see `flotilla get works --clusters %s`)", name, cluster, cluster)
		}
		return cmdutil.ExplainClusterAPI(err, c, fmt.Sprintf("delete ManifestWork %s/%s", cluster, name))
	}
	if !o.wait {
		fmt.Fprintf(o.Streams.Out, "ManifestWork %s of cluster %s is marked for deletion: its agent removes what it applied, then the work is gone.\n", name, cluster)
		return nil
	}
	if err := o.waitGone(ctx, c, cluster, name); err != nil {
		return err
	}
	fmt.Fprintf(o.Streams.Out, "ManifestWork %s of cluster %s is deleted, with what it applied.\n", name, cluster)
	return nil
}

// waitGone waits until the work no longer exists, saying what holds it.
func (o *deleteWorkOptions) waitGone(ctx context.Context, c *cmdutil.Clients, cluster, name string) error {
	prog := cmdutil.NewProgress(o.Streams.ErrOut)
	holding := "the work still exists"
	err := cmdutil.PollUntil(ctx, time.Now().Add(o.timeout), func(ctx context.Context) (bool, error) {
		mw := &workv1.ManifestWork{}
		err := c.Ctrl.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, mw)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if err != nil {
			return false, cmdutil.ExplainClusterAPI(err, c, fmt.Sprintf("get ManifestWork %s/%s", cluster, name))
		}
		holding = fmt.Sprintf("the agent of cluster %s is removing what the work applied", cluster)
		mc := &clusterv1.ManagedCluster{}
		if err := c.Ctrl.Get(ctx, client.ObjectKey{Name: cluster}, mc); err == nil {
			if cond := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable); cond == nil || cond.Status != metav1.ConditionTrue {
				status := metav1.ConditionUnknown
				if cond != nil {
					status = cond.Status
				}
				holding = fmt.Sprintf("cluster %s is not available (%s=%s), so its agent cannot remove what the work applied until it is back", cluster, clusterv1.ManagedClusterConditionAvailable, status)
			}
		}
		prog.Report("Waiting for ManifestWork %s of cluster %s to go: %s", name, cluster, holding)
		return false, nil
	})
	if errors.Is(err, cmdutil.ErrTimedOut) {
		return fmt.Errorf("timed out after --timeout %s waiting for ManifestWork %s of cluster %s to go: %s\nIf the cluster is gone for good, release the work without cleaning up: kubectl -n %s patch manifestwork %s --type merge -p '{\"metadata\":{\"finalizers\":null}}'",
			o.timeout, name, cluster, holding, cluster, name)
	}
	return err
}
