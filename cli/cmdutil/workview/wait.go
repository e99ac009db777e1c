package workview

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
)

// RolloutWait waits for the rollout of a replica set as `create work
// --wait` and `rollout status` do, printing each cluster's state and the
// rollout's as they change.
type RolloutWait struct {
	// Out receives the progress lines.
	Out io.Writer
	// Timeout bounds the wait; the error names what each cluster lacks.
	Timeout time.Duration
	// Once reports the state once instead of waiting: nil unless the
	// rollout stopped, failed or was rolled back.
	Once bool
	// StoppedHint says what to do about a rollout that stopped on failures.
	StoppedHint string
}

// errStopped ends the wait for a rollout that stopped on failures.
var errStopped = errors.New("rollout stopped")

// Run waits until the hub reports the rollout of key complete and every
// chosen cluster runs the current spec. A rollout that stopped on
// failures ends the wait at once; one the hub rolls back ends it when the
// rollback has ended (rolled back, failed, or nothing to go back to).
func (o RolloutWait) Run(ctx context.Context, c *cmdutil.Clients, key client.ObjectKey) error {
	deadline := time.Now().Add(o.Timeout)
	if o.Once {
		deadline = time.Now()
	}
	prog := map[string]*cmdutil.Progress{}
	overall := cmdutil.NewProgress(o.Out)
	var view *ReplicaSetView
	var rolledBack *rollbackError
	err := cmdutil.PollUntil(ctx, deadline, func(ctx context.Context) (bool, error) {
		rs := &workv1alpha1.ManifestWorkReplicaSet{}
		if err := c.Ctrl.Get(ctx, key, rs); err != nil {
			if apierrors.IsNotFound(err) {
				return false, fmt.Errorf("ManifestWorkReplicaSet %s is gone from the hub (was it deleted?)", key)
			}
			return false, cmdutil.ExplainClusterAPI(err, c, "get ManifestWorkReplicaSet "+key.String())
		}
		v, err := LoadReplicaSetView(ctx, c, rs, time.Now())
		if err != nil {
			return false, err
		}
		view = v
		if v.RenderErr != nil {
			return false, fmt.Errorf("ManifestWorkReplicaSet %s cannot be rolled out as written: %w", key, v.RenderErr)
		}
		if rb := RollbackCondition(rs); rb != nil {
			return false, o.reportRollback(ctx, c, v, rb, prog, overall, &rolledBack)
		}
		for _, cr := range v.Clusters {
			o.progressOf(prog, cr.Cluster).Report("%s", clusterLine(cr))
		}
		if c := meta.FindStatusCondition(rs.Status.Conditions, workv1alpha1.ManifestWorkReplicaSetConditionManifestworkApplied); c != nil &&
			c.Reason == workv1alpha1.ReasonNotAsExpected && c.ObservedGeneration >= rs.Generation {
			return false, fmt.Errorf("the hub cannot roll out ManifestWorkReplicaSet %s: %s", key, c.Message)
		}
		state := v.Rollout()
		if Paused(rs) && state != "Complete" {
			state = fmt.Sprintf("paused (resume it with %s rollout resume %s -n %s)", cmdutil.Self(), key.Name, key.Namespace)
		}
		overall.Report("Rollout of %s: %s", key, state)
		if strings.HasPrefix(state, "Stopped") {
			if v.rollbackComing() {
				return false, nil // the hub rolls it back next: wait for that
			}
			return false, errStopped
		}
		return state == "Complete", nil
	})
	switch {
	case rolledBack != nil:
		return rolledBack
	case errors.Is(err, errStopped):
		failed := view.Lacking(PhaseFailed)
		if c := meta.FindStatusCondition(view.ReplicaSet.Status.Conditions, workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut); len(failed) == 0 && c != nil {
			failed = []string{c.Message} // the hub counted failures this view does not see
		}
		return fmt.Errorf("the rollout of ManifestWorkReplicaSet %s stopped because clusters failed:\n  %s\n%s",
			key, strings.Join(failed, "\n  "), o.StoppedHint)
	case errors.Is(err, cmdutil.ErrTimedOut) && o.Once:
		return nil
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
			o.Timeout, key, strings.Join(lacks, "\n  "), cmdutil.Self(), key.Name, key.Namespace)
	}
	return err
}

func (o RolloutWait) progressOf(prog map[string]*cmdutil.Progress, cluster string) *cmdutil.Progress {
	if prog[cluster] == nil {
		prog[cluster] = cmdutil.NewProgress(o.Out)
	}
	return prog[cluster]
}

// rollbackComing says whether the rollout stopped because its revision
// failed on as many clusters as spec.rollback.failedClusters asks: the hub
// then rolls it back, and the wait goes on until it says how that went.
func (v *ReplicaSetView) rollbackComing() bool {
	rb := v.ReplicaSet.Spec.Rollback
	if rb == nil {
		return false
	}
	var failed, took int
	for _, cr := range v.Clusters {
		if cr.Phase != PhasePending {
			took++
		}
		if cr.Phase == PhaseFailed {
			failed++
		}
	}
	threshold := intstr.FromInt32(1)
	if rb.FailedClusters.String() != "0" && rb.FailedClusters.String() != "" {
		threshold = rb.FailedClusters
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(&threshold, took, true)
	return err == nil && failed > 0 && failed >= n
}

// clusterLine is a progress line for one cluster of a rollout.
func clusterLine(cr ClusterRollout) string {
	switch cr.Phase {
	case PhaseAvailable:
		return fmt.Sprintf("Cluster %s: applied and available", cr.Cluster)
	case PhaseFailed:
		return fmt.Sprintf("Cluster %s: failed: %s", cr.Cluster, cr.Why)
	case PhaseApplying:
		return fmt.Sprintf("Cluster %s: rolling out: %s", cr.Cluster, cr.Why)
	}
	return fmt.Sprintf("Cluster %s: %s", cr.Cluster, cr.Why)
}
