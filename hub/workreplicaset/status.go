package workreplicaset

import (
	"context"
	"fmt"
	"github.com/flotilla-io/flotilla/internal/rollout"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/hub/failover"
)

// setStatus writes the summaries and conditions into the replica set (the
// deferred patch sends them), and ends invalid input with a TerminalError.
func (r *Reconciler) setStatus(_ context.Context, s *scope) (ctrl.Result, error) {
	if s.retry {
		return ctrl.Result{}, nil
	}
	st := &s.mwrs.Status
	st.Summary, st.PlacementsSummary = summarize(s)
	old := map[string]metav1.Condition{}
	for _, c := range st.Conditions {
		old[c.Type] = c
	}
	rb := rolledBack(s)
	for _, c := range []metav1.Condition{placementVerified(s), manifestworkApplied(s), placementRolledOut(s)} {
		c.ObservedGeneration = s.mwrs.Generation
		meta.SetStatusCondition(&st.Conditions, c)
		if prev, ok := old[c.Type]; ok && prev.Reason == c.Reason && prev.Status == c.Status {
			continue
		}
		switch {
		case rb != nil && c.Type == workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut:
			// Condition RolledBack's event says it.
		case c.Reason == workv1alpha1.ReasonComplete:
			s.events.Add(corev1.EventTypeNormal, "RolloutComplete", "Rollout", "%s", c.Message)
		case c.Status == metav1.ConditionFalse && c.Reason != workv1alpha1.ReasonProcessing && c.Reason != workv1alpha1.ReasonProgressing:
			s.events.Add(corev1.EventTypeWarning, c.Reason, "Reconcile", "%s: %s", c.Type, c.Message)
		}
	}
	setRolledBack(s, rb, old[workv1alpha1.ManifestWorkReplicaSetConditionRolledBack])
	if s.invalid != nil {
		return ctrl.Result{}, reconcile.TerminalError(s.invalid)
	}
	return ctrl.Result{}, nil
}

// setRolledBack sets condition RolledBack to rb, or removes it when the
// current revision is not rolled back (nil), and says a change of its
// reason in an event. With input that cannot be rendered it stays as it
// was: nothing is rolled out until the spec is fixed.
func setRolledBack(s *scope, rb *metav1.Condition, prev metav1.Condition) {
	st := &s.mwrs.Status
	switch {
	case s.invalid != nil:
		return
	case rb == nil:
		meta.RemoveStatusCondition(&st.Conditions, workv1alpha1.ManifestWorkReplicaSetConditionRolledBack)
		return
	}
	rb.ObservedGeneration = s.mwrs.Generation
	meta.SetStatusCondition(&st.Conditions, *rb)
	if prev.Reason == rb.Reason && prev.Status == rb.Status {
		return
	}
	kind := corev1.EventTypeWarning
	if rb.Reason == workv1alpha1.ReasonRolledBack {
		kind = corev1.EventTypeNormal
	}
	s.events.Add(kind, rb.Reason, "Rollback", "%s", rb.Message)
}

// summarize counts the works of the chosen clusters, of all placements
// and of each. Works kept for failover on clusters no longer chosen are
// not counted: the summary says how far the replica set is from what its
// Placements want (applied never exceeds desiredTotal), and the conditions
// name the works kept and what for.
func summarize(s *scope) (workv1alpha1.ManifestWorkReplicaSetSummary, []workv1alpha1.PlacementSummary) {
	var total workv1alpha1.ManifestWorkReplicaSetSummary
	for c, w := range s.works {
		if s.chosen[c] != nil {
			count(&total, w, false)
		}
	}
	total.DesiredTotal = len(s.chosen)
	placements := make([]workv1alpha1.PlacementSummary, 0, len(s.placements))
	for _, pt := range s.placements {
		ps := workv1alpha1.PlacementSummary{Name: pt.name}
		ps.Summary.DesiredTotal = len(pt.clusters)
		groups, availableGroups := map[rollout.Group]bool{}, map[rollout.Group]bool{}
		for _, c := range pt.clusters {
			w := s.works[c]
			g := pt.groups[c]
			if _, seen := groups[g]; !seen {
				groups[g], availableGroups[g] = true, true
			}
			if !isAvailable(w) {
				availableGroups[g] = false
			}
			if w == nil {
				continue
			}
			spec, ok := s.rendered[c]
			updated := ok && SpecEqual(&w.Spec, &spec)
			count(&ps.Summary, w, updated)
			if updated {
				total.Updated++
			}
		}
		n := 0
		for _, ok := range availableGroups {
			if ok {
				n++
			}
		}
		ps.AvailableDecisionGroups = fmt.Sprintf("%d/%d", n, len(groups))
		placements = append(placements, ps)
	}
	return total, placements
}

// count adds w to sum.
func count(sum *workv1alpha1.ManifestWorkReplicaSetSummary, w *workv1.ManifestWork, updated bool) {
	sum.Total++
	if updated {
		sum.Updated++
	}
	for _, c := range w.Status.Conditions {
		if c.Status != metav1.ConditionTrue {
			continue
		}
		switch c.Type {
		case workv1.WorkApplied:
			sum.Applied++
		case workv1.WorkAvailable:
			sum.Available++
		case workv1.WorkDegraded:
			sum.Degraded++
		case workv1.WorkProgressing:
			sum.Progressing++
		}
	}
}

// placementVerified says whether every Placement and its decisions were found.
func placementVerified(s *scope) metav1.Condition {
	cond := metav1.Condition{Type: workv1alpha1.ManifestWorkReplicaSetConditionPlacementVerified}
	var missing, undecided []string
	for _, pt := range s.placements {
		switch {
		case !pt.found:
			missing = append(missing, pt.name)
		case !pt.decided:
			undecided = append(undecided, pt.name)
		}
	}
	switch {
	case len(missing) > 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, workv1alpha1.ReasonPlacementDecisionNotFound
		cond.Message = fmt.Sprintf("Placements %v do not exist in namespace %s: create them or fix spec.placementRefs", missing, s.mwrs.Namespace)
	case len(undecided) > 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, workv1alpha1.ReasonPlacementDecisionNotFound
		cond.Message = fmt.Sprintf("Placements %v have no PlacementDecisions yet", undecided)
	case s.invalid == nil && len(s.chosen) == 0 && len(s.placements) > 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, workv1alpha1.ReasonPlacementDecisionEmpty
		cond.Message = "the Placements chose no cluster"
	default:
		cond.Status, cond.Reason = metav1.ConditionTrue, workv1alpha1.ReasonAsExpected
		cond.Message = fmt.Sprintf("%d clusters chosen", len(s.chosen))
	}
	for _, pt := range s.placements {
		if pt.graceErr != nil {
			cond.Message += "; " + pt.graceErr.Error()
		}
	}
	return cond
}

// manifestworkApplied says whether every chosen cluster has its work, and
// names what keeps the works from being as desired.
func manifestworkApplied(s *scope) metav1.Condition {
	cond := metav1.Condition{Type: workv1alpha1.ManifestWorkReplicaSetConditionManifestworkApplied}
	missing := 0
	for c := range s.chosen {
		if s.works[c] == nil {
			missing++
		}
	}
	switch {
	case s.invalid != nil:
		cond.Status, cond.Reason = metav1.ConditionFalse, workv1alpha1.ReasonNotAsExpected
		cond.Message = s.invalid.Error() + "; the ManifestWorks are left as they are until the spec is fixed"
	case len(s.conflicts) > 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, workv1alpha1.ReasonNotAsExpected
		cond.Message = fmt.Sprintf("a ManifestWork named %s that this replica set does not own exists in the namespaces of clusters [%s]: delete it, or rename the replica set", s.mwrs.Name, shortList(s.conflicts))
	case missing > 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, workv1alpha1.ReasonProcessing
		cond.Message = fmt.Sprintf("%d of %d chosen clusters have their ManifestWork", len(s.chosen)-missing, len(s.chosen))
		if len(s.missingNamespace) > 0 {
			cond.Message += fmt.Sprintf("; the hub namespaces of clusters [%s] do not exist yet", shortList(s.missingNamespace))
		}
	default:
		cond.Status, cond.Reason = metav1.ConditionTrue, workv1alpha1.ReasonAsExpected
		cond.Message = fmt.Sprintf("%d ManifestWorks exist, one for each chosen cluster", len(s.chosen))
	}
	if kept := keptMessage(s.kept); kept != "" {
		cond.Message += "; " + kept
	}
	return cond
}

// placementRolledOut says whether every placement's rollout is complete,
// and which stopped or is still under way.
func placementRolledOut(s *scope) metav1.Condition {
	cond := metav1.Condition{Type: workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut}
	var stopped, progressing, waiting []string
	done := 0
	for _, pt := range s.placements {
		ro := pt.rollout
		switch {
		case !pt.found:
			waiting = append(waiting, fmt.Sprintf("Placement %s: waiting for it to be created", pt.name))
		case !pt.decided:
			waiting = append(waiting, fmt.Sprintf("Placement %s: waiting for its first decision", pt.name))
		case ro.Stopped:
			bad := s.failureDetails(ro.Failed)
			msg := fmt.Sprintf("Placement %s: rollout stopped, %s", pt.name, ro.StopReason)
			if len(bad) > 0 {
				msg += ": " + shortList(bad)
			}
			stopped = append(stopped, msg)
		case ro.Complete:
			done += len(pt.clusters)
		default:
			progressing = append(progressing, fmt.Sprintf("Placement %s: %d of %d clusters rolled out, %d in progress, %d failed",
				pt.name, ro.Succeeded, len(pt.clusters), ro.InFlight, len(ro.Failed)))
		}
	}
	switch {
	case s.invalid != nil:
		cond.Status, cond.Reason = metav1.ConditionFalse, workv1alpha1.ReasonNotAsExpected
		cond.Message = "nothing is rolled out until the spec is fixed (see ManifestworkApplied)"
	case s.rollback != nil:
		// The current revision failed: its rollout is not complete, whatever
		// becomes of the rollback, which condition RolledBack tells.
		rb := rolledBack(s)
		cond.Status, cond.Reason = metav1.ConditionFalse, rb.Reason
		cond.Message = fmt.Sprintf("the rollout of revision %d stopped: %s", s.rollback.failed.Revision, rb.Message)
	case len(stopped) > 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, workv1alpha1.ReasonNotAsExpected
		cond.Message = strings.Join(append(append(stopped, progressing...), waiting...), "; ")
	case len(progressing) > 0 || len(waiting) > 0:
		// Nothing can be rolled out to a Placement that does not exist or
		// has not decided: the rollout waits for it, it is not complete.
		cond.Status, cond.Reason = metav1.ConditionFalse, workv1alpha1.ReasonProgressing
		cond.Message = strings.Join(append(progressing, waiting...), "; ")
	default:
		cond.Status, cond.Reason = metav1.ConditionTrue, workv1alpha1.ReasonComplete
		cond.Message = fmt.Sprintf("rolled out to %d clusters", done)
	}
	if kept := keptMessage(s.kept); kept != "" {
		cond.Message += "; " + kept
	}
	return cond
}

// keptMessage says which works stay on clusters the hub tainted for
// health, and for what.
func keptMessage(kept map[string]failover.Kept) string {
	if len(kept) == 0 {
		return ""
	}
	var parts []string
	for _, c := range slices.Sorted(maps.Keys(kept)) {
		k := kept[c]
		if k.Replacement != "" {
			parts = append(parts, fmt.Sprintf("%s (%s) until %s is Available", c, failover.ShortTaint(k.Taint), k.Replacement))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s (%s) until it is chosen again, a replacement is Available, or the failover grace ends at %s",
			c, failover.ShortTaint(k.Taint), k.Until.UTC().Format(time.RFC3339)))
	}
	noun := "works kept on tainted clusters"
	if len(kept) == 1 {
		noun = "work kept on tainted cluster"
	}
	return fmt.Sprintf("%d %s %s", len(kept), noun, shortList(parts))
}

// maxListed is how many items a condition message lists: at thousands of
// clusters a full list would make the status unreadable.
const maxListed = 10

// shortList joins the first maxListed items and counts the rest.
func shortList(items []string) string {
	if len(items) <= maxListed {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:maxListed], ", "), len(items)-maxListed)
}
