package workreplicaset

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/hub/workreplicaset/render"
	"github.com/flotilla-io/flotilla/internal/rollout"
)

// maxMessage bounds a cluster's message in a failure mark.
const maxMessage = 200

// rollbackState is where the rollback of the current revision stands.
type rollbackState struct {
	// failed is the current revision, marked failed; why is its mark.
	failed *appsv1.ControllerRevision
	why    string
	// target is the revision rolled back to (nil: none is complete).
	target *appsv1.ControllerRevision
	// renderErr says why target cannot be rendered for the chosen clusters.
	renderErr error
	// failedOn are the clusters that failed on target, with why.
	failedOn []string
}

// checkRollback, with spec.rollback set, marks the current revision
// failed once its gate failed on spec.rollback.failedClusters of the
// clusters that took it, and renders the works of a failed current
// revision from the last complete revision before it. The mark lives on
// the revision's ControllerRevision, so a hub that restarts goes on
// rolling back. A complete revision is never rolled back: its gate
// passed on every cluster.
func (r *Reconciler) checkRollback(ctx context.Context, s *scope) (ctrl.Result, error) {
	if s.invalid != nil || s.retry || s.current == nil || s.mwrs.Spec.Rollback == nil {
		return ctrl.Result{}, nil
	}
	why := s.current.Annotations[workv1alpha1.RevisionFailedAnnotation]
	if why == "" {
		if isComplete(s.current) {
			return ctrl.Result{}, nil
		}
		failures, took := s.gateFailures()
		if len(failures) == 0 || len(failures) < rollbackThreshold(s.mwrs.Spec.Rollback, took) {
			return ctrl.Result{}, nil
		}
		why = fmt.Sprintf("revision %d failed its gate on %d of the %d clusters that took it: %s",
			s.current.Revision, len(failures), took, shortList(s.failureDetails(failures)))
		if err := r.markFailed(ctx, s, why); err != nil {
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				s.retry = true
				return ctrl.Result{RequeueAfter: conflictRetry}, nil
			}
			return ctrl.Result{}, err
		}
		s.events.Add(corev1.EventTypeWarning, "RevisionFailed", "Rollback", "%s", why)
	}
	rb := &rollbackState{failed: s.current, why: why, target: lastCompleteBefore(s.revisions, s.current)}
	s.rollback = rb
	if rb.target == nil {
		return ctrl.Result{}, nil
	}
	data, err := revisionOf(rb.target)
	if err == nil {
		spec := s.mwrs.Spec
		spec.ManifestWorkTemplate, spec.Overrides, spec.ReplicaDivision = data.ManifestWorkTemplate, data.Overrides, data.ReplicaDivision
		var rendered map[string]workv1.ManifestWorkSpec
		if rendered, err = render.Plan(&spec, s.clusters); err == nil {
			s.rendered, s.rendering = rendered, rb.target
			return ctrl.Result{}, nil
		}
	}
	rb.renderErr = fmt.Errorf("revision %d cannot be rendered for the chosen clusters: %w", rb.target.Revision, err)
	return ctrl.Result{}, nil
}

// gateFailures are the clusters that failed the current revision's gate,
// of all placements, and how many clusters took it.
func (s *scope) gateFailures() ([]rollout.Failure, int) {
	var failures []rollout.Failure
	took := 0
	for _, pt := range s.placements {
		res := rollout.Decide(s.states(pt), pt.strategy, s.now)
		failures = append(failures, res.Failed...)
		took += res.InFlight + res.Succeeded + len(res.Failed)
	}
	return failures, took
}

// rollbackThreshold is how many of took clusters must fail before the
// hub rolls back: failedClusters, a number or a percentage rounded up,
// and at least one.
func rollbackThreshold(p *workv1alpha1.RollbackPolicy, took int) int {
	fc := p.FailedClusters
	if fc == (intstr.IntOrString{}) {
		return 1
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(&fc, took, true)
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// failureDetails says of each failed cluster why, with what its work
// reports: the Degraded or Available condition's message, or the health
// check's.
func (s *scope) failureDetails(failures []rollout.Failure) []string {
	out := make([]string, 0, len(failures))
	for _, f := range failures {
		detail := s.workMessage(s.works[f.Cluster])
		if detail == "" {
			out = append(out, fmt.Sprintf("%s (%s)", f.Cluster, f.Why))
			continue
		}
		out = append(out, fmt.Sprintf("%s (%s: %s)", f.Cluster, f.Why, detail))
	}
	return out
}

// workMessage is what w's status says of its trouble, shortened.
func (s *scope) workMessage(w *workv1.ManifestWork) string {
	if w == nil {
		return ""
	}
	var msg string
	switch d, a := currentCondition(w, workv1.WorkDegraded), currentCondition(w, workv1.WorkAvailable); {
	case d != nil && d.Status == metav1.ConditionTrue:
		msg = d.Message
	case a != nil && a.Status != metav1.ConditionTrue:
		msg = a.Message
	case a == nil:
		msg = fmt.Sprintf("no Available condition for generation %d", w.Generation)
	default:
		msg = s.health(w).Message
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if len(msg) > maxMessage {
		msg = msg[:maxMessage] + "…"
	}
	return msg
}

// markFailed writes why to the current revision's failed mark.
func (r *Reconciler) markFailed(ctx context.Context, s *scope, why string) error {
	return r.annotateRevision(ctx, s, s.current, workv1alpha1.RevisionFailedAnnotation, why)
}

// annotateRevision sets annotation key of revision cr to value.
func (r *Reconciler) annotateRevision(ctx context.Context, s *scope, cr *appsv1.ControllerRevision, key, value string) error {
	updated := cr.DeepCopy()
	updated.Annotations = maps.Clone(cr.Annotations)
	if updated.Annotations == nil {
		updated.Annotations = map[string]string{}
	}
	updated.Annotations[key] = value
	if err := r.Writer.Patch(ctx, updated, client.MergeFrom(cr)); err != nil {
		return fmt.Errorf("annotate ControllerRevision %s/%s (revision %d) with %s: %w", cr.Namespace, cr.Name, cr.Revision, key, err)
	}
	klog.FromContext(ctx).Info("Marked a revision of a ManifestWorkReplicaSet", "manifestWorkReplicaSet", klog.KObj(s.mwrs),
		"revision", cr.Revision, "controllerRevision", cr.Name, "annotation", key, "value", value)
	r.writtenRevisions.remember(s.owner, updated, s.now)
	*cr = *updated
	return nil
}

// isComplete says whether a revision was rolled out to every chosen
// cluster and Available on each.
func isComplete(cr *appsv1.ControllerRevision) bool {
	return cr.Annotations[workv1alpha1.RevisionCompleteAnnotation] != ""
}

// holdRollback applies the rollback to the placements' rollout decisions:
// with nothing to go back to, or a target that cannot be rendered,
// nothing is pushed; once a cluster failed on the target, the rollback
// stops everywhere (it never rolls back a rollback, nor retries).
func (s *scope) holdRollback() {
	rb := s.rollback
	if rb == nil {
		return
	}
	rb.failedOn = nil
	for _, pt := range s.placements {
		if rb.target != nil && rb.renderErr == nil {
			rb.failedOn = append(rb.failedOn, s.failureDetails(pt.rollout.Failed)...)
		}
	}
	reason := ""
	switch {
	case rb.target == nil:
		reason = fmt.Sprintf("revision %d failed and no complete revision before it can be rolled back to", rb.failed.Revision)
	case rb.renderErr != nil:
		reason = "the rollback failed: " + rb.renderErr.Error()
	case len(rb.failedOn) > 0:
		reason = fmt.Sprintf("the rollback to revision %d failed", rb.target.Revision)
	default:
		return
	}
	for _, pt := range s.placements {
		if pt.rollout.Complete {
			continue
		}
		pt.rollout.Push = nil
		pt.rollout.Stopped = true
		pt.rollout.StopReason = reason
	}
}

// markComplete records the current revision as complete once its rollout
// reached every chosen cluster of every placement and each is Available
// (and healthy) for minSuccessTime: a revision a later rollback may go
// back to.
func (r *Reconciler) markComplete(ctx context.Context, s *scope) (ctrl.Result, error) {
	if s.invalid != nil || s.retry || s.current == nil || s.rollback != nil || isComplete(s.current) || len(s.chosen) == 0 {
		return ctrl.Result{}, nil
	}
	for _, pt := range s.placements {
		if !pt.found || !pt.decided || !pt.rollout.Complete || len(pt.rollout.Failed) > 0 || pt.rollout.Succeeded != len(pt.clusters) {
			return ctrl.Result{}, nil
		}
	}
	if err := r.annotateRevision(ctx, s, s.current, workv1alpha1.RevisionCompleteAnnotation, s.now.UTC().Format(time.RFC3339)); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

// rolledBack is condition RolledBack, or nil when the current revision
// is not rolled back (the condition is removed).
func rolledBack(s *scope) *metav1.Condition {
	rb := s.rollback
	if rb == nil {
		return nil
	}
	cond := &metav1.Condition{Type: workv1alpha1.ManifestWorkReplicaSetConditionRolledBack, Status: metav1.ConditionFalse}
	num := fmt.Sprintf("revision %d", rb.failed.Revision)
	failed := strings.Replace(rb.why, num, fmt.Sprintf("%s (%s)", num, rb.failed.Name), 1)
	if !strings.Contains(rb.why, num) {
		failed = fmt.Sprintf("%s (%s) failed: %s", num, rb.failed.Name, rb.why)
	}
	if rb.target == nil {
		cond.Reason = workv1alpha1.ReasonNoCompleteRevision
		cond.Message = failed + "; no revision before it was complete, so nothing was rolled back and its rollout is stopped: fix the spec, or undo to an earlier revision"
		return cond
	}
	to := fmt.Sprintf("revision %d (%s)", rb.target.Revision, rb.target.Name)
	if rb.renderErr != nil {
		cond.Reason = workv1alpha1.ReasonRollbackFailed
		cond.Message = fmt.Sprintf("%s; rolling back to %s failed: %v; the rollback stopped", failed, to, rb.renderErr)
		return cond
	}
	if len(rb.failedOn) > 0 {
		cond.Reason = workv1alpha1.ReasonRollbackFailed
		cond.Message = fmt.Sprintf("%s; rolling back to %s failed on %s: the rollback stopped and is not retried; fix the spec, or undo to another revision",
			failed, to, shortList(rb.failedOn))
		return cond
	}
	back, total, done := 0, 0, true
	for _, pt := range s.placements {
		back += pt.rollout.Succeeded
		total += len(pt.clusters)
		done = done && pt.rollout.Complete
	}
	if done {
		cond.Status, cond.Reason = metav1.ConditionTrue, workv1alpha1.ReasonRolledBack
		cond.Message = fmt.Sprintf("%s; every chosen cluster is back on %s", failed, to)
		return cond
	}
	cond.Reason = workv1alpha1.ReasonRollingBack
	cond.Message = fmt.Sprintf("%s; rolling back to %s: %d of %d clusters on it", failed, to, back, total)
	return cond
}
