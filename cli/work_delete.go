package cli

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
)

func newDeleteCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "delete",
		Short: "Delete ManifestWorks and ManifestWorkReplicaSets from the hub",
		Long:  "Delete objects from the hub: ManifestWorks, whose agents then remove what they applied, and ManifestWorkReplicaSets with their ManifestWorks.",
		Example: `  flotilla delete work hello --cluster cluster1 --wait
  flotilla delete work hello -n apps --wait`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("name what to delete: flotilla delete work NAME --cluster NAME")
			}
			return fmt.Errorf("flotilla delete does not know %q: it deletes work", args[0])
		},
	}
	cmd.AddCommand(newDeleteWorkCommand(g))
	return cmd
}

type deleteWorkOptions struct {
	*globalOptions
	cluster   string
	namespace string
	wait      bool
	timeout   time.Duration
}

func newDeleteWorkCommand(g *globalOptions) *cobra.Command {
	o := &deleteWorkOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:     "work NAME (--cluster NAME | -n NAMESPACE)",
		Aliases: []string{"works", "manifestwork", "mw"},
		Short:   "Delete a ManifestWork (its cluster's agent removes what it applied) or a ManifestWorkReplicaSet",
		Long: `Delete ManifestWork NAME of cluster --cluster, or with -n the
ManifestWorkReplicaSet NAME of NAMESPACE: the hub then deletes its
ManifestWork in every cluster. A ManifestWork that a replica set keeps is
not deleted alone, as the hub would create it again.

The ManifestWork stays, marked for deletion, until the cluster's agent has
removed the objects it applied (all of them, unless the work's
spec.deleteOption orphans some) and released the work. With --wait, delete
waits for that; while the cluster is unavailable, the work waits for its
agent to come back.`,
		Example: `  flotilla delete work hello --cluster cluster1
  flotilla delete work hello --cluster cluster1 --wait --timeout 2m
  flotilla delete work hello -n apps --wait`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("name the ManifestWork: flotilla delete work NAME (--cluster NAME | -n NAMESPACE) (got %d arguments)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.timeout <= 0 {
				return fmt.Errorf("--timeout %s must be positive", o.timeout)
			}
			if o.namespace != "" {
				if o.cluster != "" {
					return errors.New("--cluster and -n exclude each other: --cluster deletes the ManifestWork of one cluster, -n a ManifestWorkReplicaSet with its ManifestWorks")
				}
				return o.runReplicaSet(cmd.Context(), args[0])
			}
			if o.cluster == "" {
				return errors.New("--cluster is required: the cluster whose ManifestWork to delete, e.g. --cluster cluster1 (or -n NAMESPACE for a ManifestWorkReplicaSet)")
			}
			if err := validateClusterName(o.cluster); err != nil {
				return fmt.Errorf("--cluster: %w", err)
			}
			return o.run(cmd.Context(), args[0])
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.cluster, "cluster", "", "the cluster whose ManifestWork to delete")
	f.StringVarP(&o.namespace, "namespace", "n", "", "the namespace of the ManifestWorkReplicaSet to delete")
	f.BoolVar(&o.wait, "wait", false, "wait until the agent has removed what the work applied and the work is gone")
	f.DurationVar(&o.timeout, "timeout", defaultWaitTimeout, "how long --wait waits")
	_ = cmd.RegisterFlagCompletionFunc("cluster", completeClusterNames(g))
	return cmd
}

func (o *deleteWorkOptions) run(ctx context.Context, name string) error {
	c, err := o.clientsFor(hubSide)
	if err != nil {
		return err
	}
	mw := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: o.cluster, Name: name}}
	if err := c.ctrl.Get(ctx, client.ObjectKeyFromObject(mw), mw); err == nil {
		ns, rs, owned := strings.Cut(mw.Labels[workv1.ManifestWorkReplicaSetLabel], ".")
		if owned && c.ctrl.Get(ctx, client.ObjectKey{Namespace: ns, Name: rs}, &workv1alpha1.ManifestWorkReplicaSet{}) == nil {
			return fmt.Errorf("ManifestWork %s of cluster %s belongs to ManifestWorkReplicaSet %s/%s, which would create it again: delete the replica set (flotilla delete work %s -n %s), or change its Placement so that it no longer chooses %s",
				name, o.cluster, ns, rs, rs, ns, o.cluster)
		}
	}
	if err := c.ctrl.Delete(ctx, mw); err != nil {
		if apierrors.IsNotFound(err) {
			if err := c.ctrl.Get(ctx, client.ObjectKey{Name: o.cluster}, &clusterv1.ManagedCluster{}); apierrors.IsNotFound(err) {
				return fmt.Errorf("cluster %s does not exist on the hub (see `flotilla get clusters` for the names)", o.cluster)
			}
			return fmt.Errorf("ManifestWork %s not found in cluster %s (see `flotilla get works --cluster %s`)", name, o.cluster, o.cluster)
		}
		return explainClusterAPI(err, c, fmt.Sprintf("delete ManifestWork %s/%s", o.cluster, name))
	}
	if !o.wait {
		fmt.Fprintf(o.streams.Out, "ManifestWork %s of cluster %s is marked for deletion: its agent removes what it applied, then the work is gone.\n", name, o.cluster)
		return nil
	}
	if err := o.waitGone(ctx, c, name); err != nil {
		return err
	}
	fmt.Fprintf(o.streams.Out, "ManifestWork %s of cluster %s is deleted, with what it applied.\n", name, o.cluster)
	return nil
}

// waitGone waits until the work no longer exists, saying what holds it.
func (o *deleteWorkOptions) waitGone(ctx context.Context, c *clients, name string) error {
	prog := newProgress(o.streams.ErrOut)
	holding := "the work still exists"
	err := pollUntil(ctx, time.Now().Add(o.timeout), func(ctx context.Context) (bool, error) {
		mw := &workv1.ManifestWork{}
		err := c.ctrl.Get(ctx, client.ObjectKey{Namespace: o.cluster, Name: name}, mw)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if err != nil {
			return false, explainClusterAPI(err, c, fmt.Sprintf("get ManifestWork %s/%s", o.cluster, name))
		}
		holding = fmt.Sprintf("the agent of cluster %s is removing what the work applied", o.cluster)
		mc := &clusterv1.ManagedCluster{}
		if err := c.ctrl.Get(ctx, client.ObjectKey{Name: o.cluster}, mc); err == nil {
			if cond := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable); cond == nil || cond.Status != metav1.ConditionTrue {
				status := metav1.ConditionUnknown
				if cond != nil {
					status = cond.Status
				}
				holding = fmt.Sprintf("cluster %s is not available (%s=%s), so its agent cannot remove what the work applied until it is back", o.cluster, clusterv1.ManagedClusterConditionAvailable, status)
			}
		}
		prog.report("Waiting for ManifestWork %s of cluster %s to go: %s", name, o.cluster, holding)
		return false, nil
	})
	if errors.Is(err, errTimedOut) {
		return fmt.Errorf("timed out after --timeout %s waiting for ManifestWork %s of cluster %s to go: %s\nIf the cluster is gone for good, release the work without cleaning up: kubectl -n %s patch manifestwork %s --type merge -p '{\"metadata\":{\"finalizers\":null}}'",
			o.timeout, name, o.cluster, holding, o.cluster, name)
	}
	return err
}
