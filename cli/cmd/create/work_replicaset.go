package create

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
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
	deadline := time.Now().Add(o.timeout)
	prog := map[string]*cmdutil.Progress{}
	overall := cmdutil.NewProgress(o.Streams.ErrOut)
	var view *workview.ReplicaSetView
	err := cmdutil.PollUntil(ctx, deadline, func(ctx context.Context) (bool, error) {
		rs := &workv1alpha1.ManifestWorkReplicaSet{}
		if err := c.Ctrl.Get(ctx, key, rs); err != nil {
			if apierrors.IsNotFound(err) {
				return false, fmt.Errorf("ManifestWorkReplicaSet %s is gone from the hub (was it deleted?)", key)
			}
			return false, cmdutil.ExplainClusterAPI(err, c, "get ManifestWorkReplicaSet "+key.String())
		}
		v, err := workview.LoadReplicaSetView(ctx, c, rs, time.Now())
		if err != nil {
			return false, err
		}
		view = v
		if v.RenderErr != nil {
			return false, fmt.Errorf("ManifestWorkReplicaSet %s cannot be rolled out as written: %w", key, v.RenderErr)
		}
		for _, cr := range v.Clusters {
			if prog[cr.Cluster] == nil {
				prog[cr.Cluster] = cmdutil.NewProgress(o.Streams.ErrOut)
			}
			prog[cr.Cluster].Report("%s", clusterLine(cr))
		}
		if c := meta.FindStatusCondition(rs.Status.Conditions, workv1alpha1.ManifestWorkReplicaSetConditionManifestworkApplied); c != nil &&
			c.Reason == workv1alpha1.ReasonNotAsExpected && c.ObservedGeneration >= rs.Generation {
			return false, fmt.Errorf("the hub cannot roll out ManifestWorkReplicaSet %s: %s", key, c.Message)
		}
		state := v.Rollout()
		overall.Report("Rollout of %s: %s", key, state)
		if strings.HasPrefix(state, "Stopped") {
			return false, errStopped
		}
		return state == "Complete", nil
	})
	switch {
	case errors.Is(err, errStopped):
		failed := view.Lacking(workview.PhaseFailed)
		if c := meta.FindStatusCondition(view.ReplicaSet.Status.Conditions, workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut); len(failed) == 0 && c != nil {
			failed = []string{c.Message} // the hub counted failures this view does not see
		}
		return fmt.Errorf("the rollout of ManifestWorkReplicaSet %s stopped because clusters failed:\n  %s\nFix the work (or its overrides) and create it again with --overwrite; see %s describe work %s -n %s",
			key, strings.Join(failed, "\n  "), cmdutil.Self(), key.Name, key.Namespace)
	case errors.Is(err, cmdutil.ErrTimedOut):
		lacks := []string{"the hub has not reported the rollout complete (is its ManifestWorkReplicaSet controller running?)"}
		if view != nil {
			if l := view.Lacking(""); len(l) > 0 {
				lacks = l
			}
			if len(view.Clusters) == 0 {
				lacks = []string{"its Placements chose no cluster (see " + cmdutil.Self() + " get placements -n " + key.Namespace + ")"}
			}
		}
		return fmt.Errorf("timed out after --timeout %s waiting for the rollout of ManifestWorkReplicaSet %s:\n  %s\nSee it with: %s describe work %s -n %s",
			o.timeout, key, strings.Join(lacks, "\n  "), cmdutil.Self(), key.Name, key.Namespace)
	case err != nil:
		return err
	}
	o.Notef("Show it with: %s describe work %s -n %s", cmdutil.Self(), key.Name, key.Namespace)
	return nil
}

// errStopped ends the wait for a rollout that stopped on failures.
var errStopped = errors.New("rollout stopped")

// clusterLine is a progress line for one cluster of a rollout.
func clusterLine(cr workview.ClusterRollout) string {
	switch cr.Phase {
	case workview.PhaseAvailable:
		return fmt.Sprintf("Cluster %s: applied and available", cr.Cluster)
	case workview.PhaseFailed:
		return fmt.Sprintf("Cluster %s: failed: %s", cr.Cluster, cr.Why)
	case workview.PhaseApplying:
		return fmt.Sprintf("Cluster %s: rolling out: %s", cr.Cluster, cr.Why)
	}
	return fmt.Sprintf("Cluster %s: %s", cr.Cluster, cr.Why)
}
