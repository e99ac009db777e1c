package create

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/cli/cmdutil/workview"
)

// runReplicaSet creates (or with --overwrite replaces) a ManifestWorkReplicaSet.
func (o *createWorkOptions) runReplicaSet(ctx context.Context, rs *workv1alpha1.ManifestWorkReplicaSet, src *workSource) error {
	c, err := o.ClientsFor(cmdutil.HubSide)
	if err != nil {
		return err
	}
	key := client.ObjectKeyFromObject(rs)
	// The Placements are checked first, so that a typo does not leave a
	// replica set that waits for a Placement nobody will create.
	for _, ref := range rs.Spec.PlacementRefs {
		err := c.Ctrl.Get(ctx, client.ObjectKey{Namespace: rs.Namespace, Name: ref.Name}, &clusterv1beta1.Placement{})
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("nothing was created: Placement %s does not exist in namespace %s: create it first (flotilla create placement %s -n %s --label-selectors ...), or see `flotilla get placements -n %s`",
				ref.Name, rs.Namespace, ref.Name, rs.Namespace, rs.Namespace)
		}
		if err != nil {
			return cmdutil.ExplainClusterAPI(err, c, fmt.Sprintf("get Placement %s/%s", rs.Namespace, ref.Name))
		}
	}
	// Render it for the clusters chosen now, as the hub will: overrides or
	// a division that cannot apply are refused before anything is written.
	preview, err := workview.LoadReplicaSetView(ctx, c, rs, time.Now())
	if err != nil {
		return err
	}
	if preview.RenderErr != nil {
		return fmt.Errorf("nothing was created: the hub could not roll out ManifestWorkReplicaSet %s as written, for the clusters its Placements choose now (%s): %w",
			key, strings.Join(preview.ClusterNames(), ", "), preview.RenderErr)
	}
	if err := checkNameFree(ctx, c, rs, preview.ClusterNames()); err != nil {
		return err
	}
	verb := "created"
	err = c.Ctrl.Create(ctx, rs)
	switch {
	case apierrors.IsAlreadyExists(err) && !o.overwrite:
		return fmt.Errorf("ManifestWorkReplicaSet %s already exists in namespace %s: pass --overwrite to replace its spec, or delete it first", key.Name, key.Namespace)
	case apierrors.IsAlreadyExists(err):
		verb = "replaced"
		err = replaceReplicaSet(ctx, c, rs)
	case err != nil:
		err = cmdutil.ExplainClusterAPI(err, c, "create ManifestWorkReplicaSet "+key.String())
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Streams.Out, "ManifestWorkReplicaSet %s %s in namespace %s: %s\n", key.Name, verb, key.Namespace, replicaSetSummary(rs, src))
	if o.wait {
		return o.waitRollout(ctx, c, key)
	}
	o.Notef("Follow its rollout with: %s describe work %s -n %s", cmdutil.Self(), key.Name, key.Namespace)
	return nil
}

// checkNameFree refuses a replica set whose name a ManifestWork of another
// owner already has in a chosen cluster's namespace: the hub would leave
// that cluster out.
func checkNameFree(ctx context.Context, c *cmdutil.Clients, rs *workv1alpha1.ManifestWorkReplicaSet, clusters []string) error {
	var taken []string
	for _, cluster := range clusters {
		mw := &workv1.ManifestWork{}
		err := c.Ctrl.Get(ctx, client.ObjectKey{Namespace: cluster, Name: rs.Name}, mw)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return cmdutil.ExplainClusterAPI(err, c, fmt.Sprintf("get ManifestWork %s/%s", cluster, rs.Name))
		case mw.Labels[workv1.ManifestWorkReplicaSetLabel] != rs.Namespace+"."+rs.Name:
			taken = append(taken, cluster)
		}
	}
	if len(taken) > 0 {
		return fmt.Errorf("nothing was created: clusters %s already have a ManifestWork named %s that is not this replica set's, so the hub would leave them out: name the replica set otherwise, or delete those works (flotilla delete work %s --clusters CLUSTER)",
			strings.Join(taken, ", "), rs.Name, rs.Name)
	}
	return nil
}

// replaceReplicaSet gives an existing replica set the new spec, keeping
// what others put in its metadata.
func replaceReplicaSet(ctx context.Context, c *cmdutil.Clients, want *workv1alpha1.ManifestWorkReplicaSet) error {
	key := client.ObjectKeyFromObject(want)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := &workv1alpha1.ManifestWorkReplicaSet{}
		if err := c.Ctrl.Get(ctx, key, cur); err != nil {
			return err
		}
		if cur.DeletionTimestamp != nil {
			return fmt.Errorf("ManifestWorkReplicaSet %s is being deleted: wait until it is gone, then create it again", key)
		}
		cur.Spec = *want.Spec.DeepCopy()
		addMetadata(cur, want.Labels, want.Annotations)
		if err := c.Ctrl.Update(ctx, cur); err != nil {
			return err
		}
		*want = *cur
		return nil
	})
	return cmdutil.ExplainClusterAPI(err, c, "replace ManifestWorkReplicaSet "+key.String())
}

// replicaSetSummary says in one line what the replica set does.
func replicaSetSummary(rs *workv1alpha1.ManifestWorkReplicaSet, src *workSource) string {
	var parts []string
	for _, ref := range rs.Spec.PlacementRefs {
		parts = append(parts, "Placement "+ref.Name+" ("+workview.StrategyText(ref.RolloutStrategy)+")")
	}
	parts = append(parts, cmdutil.Plural(len(src.spec.Workload.Manifests), "manifest"))
	if n := len(rs.Spec.Overrides); n > 0 {
		parts = append(parts, cmdutil.Plural(n, "override"))
	}
	if d := rs.Spec.ReplicaDivision; d != nil {
		parts = append(parts, workview.DivisionText(d))
	}
	return strings.Join(parts, ", ")
}

// waitRollout waits until the hub reports the rollout complete and every
// chosen cluster runs the current spec, printing each cluster's state as
// it changes; a rollout that stopped on failures ends the wait at once.
func (o *createWorkOptions) waitRollout(ctx context.Context, c *cmdutil.Clients, key client.ObjectKey) error {
	err := workview.RolloutWait{Out: o.Streams.ErrOut, Timeout: o.timeout,
		StoppedHint: fmt.Sprintf("Fix the work (or its overrides) and create it again with --overwrite; see %s describe work %s -n %s", cmdutil.Self(), key.Name, key.Namespace),
	}.Run(ctx, c, key)
	if err != nil {
		return err
	}
	o.Notef("Show it with: %s describe work %s -n %s", cmdutil.Self(), key.Name, key.Namespace)
	return nil
}
