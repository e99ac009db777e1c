package workview

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
)

// rollbackError ends a wait whose revision failed: the hub rolled it back,
// or could not.
type rollbackError struct {
	key       client.ObjectKey
	condition metav1.Condition
}

func (e *rollbackError) Error() string {
	what := map[string]string{
		workv1alpha1.ReasonRolledBack:         "failed, and the hub rolled it back",
		workv1alpha1.ReasonRollbackFailed:     "failed, and the hub's rollback failed too (it stopped there)",
		workv1alpha1.ReasonNoCompleteRevision: "failed, and the hub had no complete revision to roll back to",
		workv1alpha1.ReasonRollingBack:        "failed, and the hub is rolling it back",
	}[e.condition.Reason]
	if what == "" {
		what = "failed (" + e.condition.Reason + ")"
	}
	return fmt.Sprintf("the current revision of ManifestWorkReplicaSet %s %s: %s\nSee %s rollout history %s -n %s; fix the spec and apply it again, or go back with %s rollout undo %s -n %s",
		e.key, what, e.condition.Message, cmdutil.Self(), e.key.Name, e.key.Namespace, cmdutil.Self(), e.key.Name, e.key.Namespace)
}

// reportRollback prints where a rollback stands, each cluster with the
// revision it carries, and sets *ended once the rollback has ended (or at
// once, for a wait of Once: the revision failed either way).
func (o RolloutWait) reportRollback(ctx context.Context, c *cmdutil.Clients, v *ReplicaSetView, rb *metav1.Condition,
	prog map[string]*cmdutil.Progress, overall *cmdutil.Progress, ended **rollbackError) error {
	revs, err := LoadRevisions(ctx, c.Ctrl, v.ReplicaSet)
	if err != nil {
		return cmdutil.ExplainClusterAPI(err, c, "read the revisions")
	}
	number := map[string]int64{}
	for _, r := range revs {
		number[r.Name] = r.Number
	}
	for _, cr := range v.Clusters {
		o.progressOf(prog, cr.Cluster).Report("%s", revisionLine(cr, number))
	}
	key := client.ObjectKeyFromObject(v.ReplicaSet)
	overall.Report("Rollout of %s: %s: %s", key, rb.Reason, rb.Message)
	if rb.Reason != workv1alpha1.ReasonRollingBack || o.Once {
		*ended = &rollbackError{key: key, condition: *rb}
		return *ended
	}
	return nil
}

// revisionLine is a progress line for one cluster during a rollback: the
// revision its ManifestWork carries and whether its agent reports it.
func revisionLine(cr ClusterRollout, number map[string]int64) string {
	w := cr.work
	if w == nil {
		return fmt.Sprintf("Cluster %s: no ManifestWork (it never took the failed revision)", cr.Cluster)
	}
	rev := "revision ?"
	if n, ok := number[w.Annotations[workv1alpha1.RevisionAnnotation]]; ok {
		rev = fmt.Sprintf("revision %d", n)
	}
	if missing := WorkMissing(w, w.Generation); len(missing) > 0 {
		what, _ := cmdutil.SplitHint(missing[0])
		return fmt.Sprintf("Cluster %s: %s: %s", cr.Cluster, rev, what)
	}
	for _, t := range []string{workv1.WorkApplied, workv1.WorkAvailable} {
		if c := meta.FindStatusCondition(w.Status.Conditions, t); c == nil || c.ObservedGeneration != w.Generation {
			return fmt.Sprintf("Cluster %s: %s: its agent has not reported on it yet", cr.Cluster, rev)
		}
	}
	return fmt.Sprintf("Cluster %s: %s: applied and available", cr.Cluster, rev)
}
