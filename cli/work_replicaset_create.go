package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// runReplicaSet creates (or with --overwrite replaces) a ManifestWorkReplicaSet.
func (o *createWorkOptions) runReplicaSet(ctx context.Context, rs *workv1alpha1.ManifestWorkReplicaSet, src *workSource) error {
	c, err := o.clientsFor(hubSide)
	if err != nil {
		return err
	}
	key := client.ObjectKeyFromObject(rs)
	// The Placements are checked first, so that a typo does not leave a
	// replica set that waits for a Placement nobody will create.
	for _, ref := range rs.Spec.PlacementRefs {
		err := c.ctrl.Get(ctx, client.ObjectKey{Namespace: rs.Namespace, Name: ref.Name}, &clusterv1beta1.Placement{})
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("nothing was created: Placement %s does not exist in namespace %s: create it first (flotilla create placement %s -n %s --label-selectors ...), or see `flotilla get placements -n %s`",
				ref.Name, rs.Namespace, ref.Name, rs.Namespace, rs.Namespace)
		}
		if err != nil {
			return explainClusterAPI(err, c, fmt.Sprintf("get Placement %s/%s", rs.Namespace, ref.Name))
		}
	}
	// Render it for the clusters chosen now, as the hub will: overrides or
	// a division that cannot apply are refused before anything is written.
	preview, err := loadReplicaSetView(ctx, c, rs, time.Now())
	if err != nil {
		return err
	}
	if preview.renderErr != nil {
		return fmt.Errorf("nothing was created: the hub could not roll out ManifestWorkReplicaSet %s as written, for the clusters its Placements choose now (%s): %w",
			key, strings.Join(preview.clusterNames(), ", "), preview.renderErr)
	}
	if err := checkNameFree(ctx, c, rs, preview.clusterNames()); err != nil {
		return err
	}
	verb := "created"
	err = c.ctrl.Create(ctx, rs)
	switch {
	case apierrors.IsAlreadyExists(err) && !o.overwrite:
		return fmt.Errorf("ManifestWorkReplicaSet %s already exists in namespace %s: pass --overwrite to replace its spec, or delete it first", key.Name, key.Namespace)
	case apierrors.IsAlreadyExists(err):
		verb = "replaced"
		err = replaceReplicaSet(ctx, c, rs)
	case err != nil:
		err = explainClusterAPI(err, c, "create ManifestWorkReplicaSet "+key.String())
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(o.streams.Out, "ManifestWorkReplicaSet %s %s in namespace %s: %s\n", key.Name, verb, key.Namespace, replicaSetSummary(rs, src))
	if o.wait {
		return o.waitRollout(ctx, c, key)
	}
	o.notef("Follow its rollout with: flotilla describe work %s -n %s", key.Name, key.Namespace)
	return nil
}

// checkNameFree refuses a replica set whose name a ManifestWork of another
// owner already has in a chosen cluster's namespace: the hub would leave
// that cluster out.
func checkNameFree(ctx context.Context, c *clients, rs *workv1alpha1.ManifestWorkReplicaSet, clusters []string) error {
	var taken []string
	for _, cluster := range clusters {
		mw := &workv1.ManifestWork{}
		err := c.ctrl.Get(ctx, client.ObjectKey{Namespace: cluster, Name: rs.Name}, mw)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return explainClusterAPI(err, c, fmt.Sprintf("get ManifestWork %s/%s", cluster, rs.Name))
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
func replaceReplicaSet(ctx context.Context, c *clients, want *workv1alpha1.ManifestWorkReplicaSet) error {
	key := client.ObjectKeyFromObject(want)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := &workv1alpha1.ManifestWorkReplicaSet{}
		if err := c.ctrl.Get(ctx, key, cur); err != nil {
			return err
		}
		if cur.DeletionTimestamp != nil {
			return fmt.Errorf("ManifestWorkReplicaSet %s is being deleted: wait until it is gone, then create it again", key)
		}
		cur.Spec = *want.Spec.DeepCopy()
		addMetadata(cur, want.Labels, want.Annotations)
		if err := c.ctrl.Update(ctx, cur); err != nil {
			return err
		}
		*want = *cur
		return nil
	})
	return explainClusterAPI(err, c, "replace ManifestWorkReplicaSet "+key.String())
}

// replicaSetSummary says in one line what the replica set does.
func replicaSetSummary(rs *workv1alpha1.ManifestWorkReplicaSet, src *workSource) string {
	var parts []string
	for _, ref := range rs.Spec.PlacementRefs {
		parts = append(parts, "Placement "+ref.Name+" ("+strategyText(ref.RolloutStrategy)+")")
	}
	parts = append(parts, plural(len(src.spec.Workload.Manifests), "manifest"))
	if n := len(rs.Spec.Overrides); n > 0 {
		parts = append(parts, plural(n, "override"))
	}
	if d := rs.Spec.ReplicaDivision; d != nil {
		parts = append(parts, divisionText(d))
	}
	return strings.Join(parts, ", ")
}

// strategyText says a rollout strategy briefly, e.g. "Progressive, 1 at a time".
func strategyText(s workv1alpha1.RolloutStrategy) string {
	typ := s.Type
	if typ == "" {
		typ = workv1alpha1.All
	}
	parts := []string{"rollout " + string(typ)}
	if s.Type == workv1alpha1.Progressive && s.Progressive != nil && s.Progressive.MaxConcurrency.String() != "0" {
		parts = append(parts, s.Progressive.MaxConcurrency.String()+" at a time")
	}
	cfg := rolloutConfig(s)
	if d := cfg.ProgressDeadline; d != "" && d != workv1alpha1.ProgressDeadlineNone {
		parts = append(parts, "deadline "+d)
	}
	if cfg.MinSuccessTime.Duration > 0 {
		parts = append(parts, "min success "+cfg.MinSuccessTime.Duration.String())
	}
	if typ != workv1alpha1.All {
		parts = append(parts, "max failures "+cfg.MaxFailures.String())
	}
	return strings.Join(parts, ", ")
}

// divisionText says a replica division briefly, e.g. "3 replicas divided by weight (cluster1=2, others 1)".
func divisionText(d *workv1alpha1.ReplicaDivision) string {
	total := "the replicas"
	if d.TotalReplicas != nil {
		total = plural(int(*d.TotalReplicas), "replica")
	}
	var weights []string
	for _, w := range d.Weights {
		who := strings.Join(w.ClusterNames, ",")
		if w.ClusterSelector != nil {
			who = strings.TrimPrefix(who+",", ",") + "[" + metav1.FormatLabelSelector(w.ClusterSelector) + "]"
		}
		weights = append(weights, fmt.Sprintf("%s=%d", who, w.Weight))
	}
	def := int32(1)
	if d.DefaultWeight != nil {
		def = *d.DefaultWeight
	}
	weights = append(weights, fmt.Sprintf("others %d", def))
	how := "by weight"
	if d.Type == workv1alpha1.ReplicaDivisionAllocatable {
		how = "by allocatable " + d.Resource + " times weight"
	}
	return fmt.Sprintf("%s divided %s (%s)", total, how, strings.Join(weights, ", "))
}

// waitRollout waits until the hub reports the rollout complete and every
// chosen cluster runs the current spec, printing each cluster's state as
// it changes; a rollout that stopped on failures ends the wait at once.
func (o *createWorkOptions) waitRollout(ctx context.Context, c *clients, key client.ObjectKey) error {
	deadline := time.Now().Add(o.timeout)
	prog := map[string]*progress{}
	overall := newProgress(o.streams.ErrOut)
	var view *replicaSetView
	err := pollUntil(ctx, deadline, func(ctx context.Context) (bool, error) {
		rs := &workv1alpha1.ManifestWorkReplicaSet{}
		if err := c.ctrl.Get(ctx, key, rs); err != nil {
			if apierrors.IsNotFound(err) {
				return false, fmt.Errorf("ManifestWorkReplicaSet %s is gone from the hub (was it deleted?)", key)
			}
			return false, explainClusterAPI(err, c, "get ManifestWorkReplicaSet "+key.String())
		}
		v, err := loadReplicaSetView(ctx, c, rs, time.Now())
		if err != nil {
			return false, err
		}
		view = v
		if v.renderErr != nil {
			return false, fmt.Errorf("ManifestWorkReplicaSet %s cannot be rolled out as written: %w", key, v.renderErr)
		}
		for _, cr := range v.clusters {
			if prog[cr.cluster] == nil {
				prog[cr.cluster] = newProgress(o.streams.ErrOut)
			}
			prog[cr.cluster].report("%s", clusterLine(cr))
		}
		if c := meta.FindStatusCondition(rs.Status.Conditions, workv1alpha1.ManifestWorkReplicaSetConditionManifestworkApplied); c != nil &&
			c.Reason == workv1alpha1.ReasonNotAsExpected && c.ObservedGeneration >= rs.Generation {
			return false, fmt.Errorf("the hub cannot roll out ManifestWorkReplicaSet %s: %s", key, c.Message)
		}
		state := v.rollout()
		overall.report("Rollout of %s: %s", key, state)
		if strings.HasPrefix(state, "Stopped") {
			return false, errStopped
		}
		return state == "Complete", nil
	})
	switch {
	case errors.Is(err, errStopped):
		failed := view.lacking(phaseFailed)
		if c := meta.FindStatusCondition(view.rs.Status.Conditions, workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut); len(failed) == 0 && c != nil {
			failed = []string{c.Message} // the hub counted failures this view does not see
		}
		return fmt.Errorf("the rollout of ManifestWorkReplicaSet %s stopped because clusters failed:\n  %s\nFix the work (or its overrides) and create it again with --overwrite; see flotilla describe work %s -n %s",
			key, strings.Join(failed, "\n  "), key.Name, key.Namespace)
	case errors.Is(err, errTimedOut):
		lacks := []string{"the hub has not reported the rollout complete (is its ManifestWorkReplicaSet controller running?)"}
		if view != nil {
			if l := view.lacking(""); len(l) > 0 {
				lacks = l
			}
			if len(view.clusters) == 0 {
				lacks = []string{"its Placements chose no cluster (see flotilla get placements -n " + key.Namespace + ")"}
			}
		}
		return fmt.Errorf("timed out after --timeout %s waiting for the rollout of ManifestWorkReplicaSet %s:\n  %s\nSee it with: flotilla describe work %s -n %s",
			o.timeout, key, strings.Join(lacks, "\n  "), key.Name, key.Namespace)
	case err != nil:
		return err
	}
	o.notef("Show it with: flotilla describe work %s -n %s", key.Name, key.Namespace)
	return nil
}

// errStopped ends the wait for a rollout that stopped on failures.
var errStopped = errors.New("rollout stopped")

// clusterLine is a progress line for one cluster of a rollout.
func clusterLine(cr clusterRollout) string {
	switch cr.phase {
	case phaseAvailable:
		return fmt.Sprintf("Cluster %s: applied and available", cr.cluster)
	case phaseFailed:
		return fmt.Sprintf("Cluster %s: failed: %s", cr.cluster, cr.why)
	case phaseApplying:
		return fmt.Sprintf("Cluster %s: rolling out: %s", cr.cluster, cr.why)
	}
	return fmt.Sprintf("Cluster %s: %s", cr.cluster, cr.why)
}

// lacking lists, per cluster not yet available (only those in phase, if
// given), what it lacks.
func (v *replicaSetView) lacking(phase clusterPhase) []string {
	var out []string
	for _, cr := range v.clusters {
		if cr.phase == phaseAvailable || (phase != "" && cr.phase != phase) {
			continue
		}
		out = append(out, fmt.Sprintf("cluster %s: %s", cr.cluster, cr.why))
	}
	if phase == "" && len(out) == 0 {
		if c := meta.FindStatusCondition(v.rs.Status.Conditions, workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut); c == nil || c.Status != metav1.ConditionTrue {
			out = append(out, "the hub has not reported the rollout complete yet (PlacementRolledOut)")
		}
	}
	return out
}

// clusterNames are the chosen clusters of the view.
func (v *replicaSetView) clusterNames() []string {
	out := make([]string, 0, len(v.clusters))
	for _, cr := range v.clusters {
		out = append(out, cr.cluster)
	}
	return out
}
