package work

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// deletionPoll is how soon a deletion that waits for objects to go looks
// again when no watch event came first.
const deletionPoll = 2 * time.Second

// reconcileDelete handles a ManifestWork being deleted, by its
// deleteOption: Foreground (the default) deletes what the work applied and
// waits until it is gone; Orphan keeps every object, SelectivelyOrphan
// those its orphaningRules name; kept objects lose the work's
// ownerReference. Then the AppliedManifestWork goes, and last the
// finalizer, which lets the hub delete the work.
func (r *reconciler) reconcileDelete(ctx context.Context, s *scope) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(s.work, workv1.ManifestWorkFinalizer) {
		r.states.forget(s.work.Name)
		return ctrl.Result{}, nil
	}
	a, err := r.getApplied(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	if a != nil {
		if a.DeletionTimestamp.IsZero() {
			opt := s.work.Spec.DeleteOption
			waiting, err := r.releaseAll(ctx, a, func(id workv1.ResourceIdentifier) bool { return orphaned(opt, id) })
			s.state.applied = nil
			if err != nil || waiting > 0 {
				r.reportDeleting(ctx, s, waiting, err)
				return ctrl.Result{RequeueAfter: deletionPoll}, err
			}
			if err := r.deleteApplied(ctx, a); err != nil {
				return ctrl.Result{}, err
			}
			s.state.applied = nil
		}
		// Wait for the record to go, so that a new work of the same name
		// does not find it.
		return ctrl.Result{RequeueAfter: deletionPoll / 4}, nil
	}
	before := s.work.DeepCopy()
	controllerutil.RemoveFinalizer(s.work, workv1.ManifestWorkFinalizer)
	if err := r.hub.Patch(ctx, s.work, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("remove the finalizer of ManifestWork %s: %w", klog.KObj(s.work), err)
	}
	r.states.forget(s.work.Name)
	klog.FromContext(ctx).Info("Removed a deleted ManifestWork from the managed cluster")
	return ctrl.Result{}, nil
}

// releaseAll deletes every object a records, or disowns it when orphan
// says so, and returns how many are still being deleted.
func (r *reconciler) releaseAll(ctx context.Context, a *workv1.AppliedManifestWork, orphan func(workv1.ResourceIdentifier) bool) (int, error) {
	var (
		waiting []workv1.AppliedManifestResourceMeta
		errs    []error
	)
	entries := slices.Clone(a.Status.AppliedResources)
	// An object applied but not recorded yet (the agent stopped in
	// between) is still the work's: the watches know it.
	for _, e := range r.watcher.owned(a.UID) {
		if !slices.ContainsFunc(entries, func(x workv1.AppliedManifestResourceMeta) bool { return x.ResourceIdentifier == e.ResourceIdentifier }) {
			entries = append(entries, e)
		}
	}
	for _, e := range entries {
		pending, err := r.release(ctx, a, e, orphan(e.ResourceIdentifier))
		switch {
		case err != nil:
			errs = append(errs, err)
			waiting = append(waiting, e)
		case pending != nil:
			waiting = append(waiting, *pending)
		}
	}
	if !equality.Semantic.DeepEqual(waiting, a.Status.AppliedResources) {
		before := a.DeepCopy()
		a.Status.AppliedResources = waiting
		if err := r.spoke.applied.Status().Patch(ctx, a, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
			errs = append(errs, fmt.Errorf("record the deletion in AppliedManifestWork %s: %w", a.Name, err))
		}
	}
	return len(waiting), errors.Join(errs...)
}

// orphaned says whether the deleteOption keeps the object id.
func orphaned(opt *workv1.DeleteOption, id workv1.ResourceIdentifier) bool {
	if opt == nil {
		return false
	}
	switch opt.PropagationPolicy {
	case workv1.DeletePropagationPolicyTypeOrphan:
		return true
	case workv1.DeletePropagationPolicyTypeSelectivelyOrphan:
		if opt.SelectivelyOrphan == nil {
			return false
		}
		for _, rule := range opt.SelectivelyOrphan.OrphaningRules {
			if workv1.ResourceIdentifier(rule) == id {
				return true
			}
		}
	}
	return false
}

// deleteApplied deletes the AppliedManifestWork once every object it
// records is deleted or disowned. Should the spoke's garbage collector
// still find an object it owns, that object was applied and never
// recorded nor seen, and goes with it, as Foreground deletion would have
// it. (Orphan propagation would keep such objects, but waits for the
// garbage collector to know the AppliedManifestWork kind, which on a
// fresh cluster takes up to its discovery period.)
func (r *reconciler) deleteApplied(ctx context.Context, a *workv1.AppliedManifestWork) error {
	err := r.spoke.applied.Delete(ctx, a, &client.DeleteOptions{
		Preconditions:     &metav1.Preconditions{UID: ptr.To(a.UID)},
		PropagationPolicy: ptr.To(metav1.DeletePropagationBackground),
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete AppliedManifestWork %s: %w", a.Name, err)
	}
	return nil
}

// reportDeleting says on the work what its deletion waits for.
func (r *reconciler) reportDeleting(ctx context.Context, s *scope, waiting int, err error) {
	before := s.work.DeepCopy()
	msg := fmt.Sprintf("Waiting for %d applied objects to be deleted", waiting)
	if err != nil {
		msg = truncate(fmt.Sprintf("%s: %v", msg, err))
	}
	c := metav1.Condition{Type: workv1.WorkDeleting, Status: metav1.ConditionTrue, Reason: "Deleting", Message: msg, ObservedGeneration: s.work.Generation}
	s.work.Status.Conditions = mergeConditions(s.work.Status.Conditions, setCondition(append([]metav1.Condition(nil), s.work.Status.Conditions...), c), time.Now())
	if perr := r.patchStatus(ctx, before, s.work); perr != nil {
		klog.FromContext(ctx).V(1).Info("Cannot report the deletion's progress", "reason", perr.Error())
	}
}
