package template

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/internal/addon"
)

// finalizer holds the MCA with the pre-delete finalizer while the
// template has a hook, and lets it go when it has none.
func (r *Reconciler) finalizer(ctx context.Context, s *state) (bool, error) {
	if s.mca.DeletionTimestamp != nil {
		if s.hook == nil {
			s.releaseFinalizer = slices.Contains(s.mca.Finalizers, addon.PreDeleteHookFinalizer)
		}
		return false, nil
	}
	return false, r.setFinalizer(ctx, s, s.hook != nil)
}

// deployWorks creates and updates the deploy works, once the registration
// is applied and the configs are in status (Configured=True), deletes those
// no longer rendered, and says in ManifestApplied how that went.
func (r *Reconciler) deployWorks(ctx context.Context, s *state) (bool, error) {
	if s.mca.DeletionTimestamp != nil || s.cluster.DeletionTimestamp != nil {
		return false, nil
	}
	if meta.FindStatusCondition(s.mca.Status.Conditions, addon.ConditionRegistrationApplied) == nil ||
		!meta.IsStatusConditionTrue(s.mca.Status.Conditions, addon.ConditionConfigured) {
		return true, nil
	}
	var errs []error
	for _, w := range s.deploy {
		errs = append(errs, r.applyWork(ctx, s, w))
	}
	for name, w := range s.works {
		if strings.HasPrefix(name, "addon-"+s.mca.Name+"-deploy-") && !slices.ContainsFunc(s.deploy, func(d *workv1.ManifestWork) bool { return d.Name == name }) && ownedBy(w, s) {
			if err := r.Client.Delete(ctx, w, client.Preconditions{UID: &w.UID}); client.IgnoreNotFound(err) != nil {
				errs = append(errs, fmt.Errorf("delete ManifestWork %s/%s: %w", w.Namespace, name, err))
			}
		}
	}
	set := func(status metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&s.mca.Status.Conditions, metav1.Condition{
			Type: addon.ConditionManifestApplied, Status: status, Reason: reason, Message: msg, ObservedGeneration: s.mca.Generation,
		})
	}
	if err := errors.Join(errs...); err != nil {
		if quiet(err) {
			return true, err
		}
		set(metav1.ConditionFalse, ReasonManifestApplyFailed, err.Error())
		return true, err
	}
	status, reason, msg := manifestApplied(s.deploy, s.works, s.written)
	set(status, reason, msg)
	return false, nil
}

// manifestApplied is ManifestApplied once the deploy works were written:
// False when a work reports, for the generation it holds, that it is not
// applied; else True. A work written in this pass has no status of its own
// yet, so an older False is not held against it.
func manifestApplied(deploy []*workv1.ManifestWork, works map[string]*workv1.ManifestWork, written map[string]bool) (metav1.ConditionStatus, string, string) {
	if len(deploy) == 0 {
		return metav1.ConditionTrue, ReasonManifestApplied, MessageNoManifest
	}
	for _, d := range deploy {
		w := works[d.Name]
		if w == nil || written[d.Name] {
			continue
		}
		if c := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkApplied); c != nil && c.Status == metav1.ConditionFalse && c.ObservedGeneration == w.Generation {
			return metav1.ConditionFalse, ReasonManifestAppliedFailed, fmt.Sprintf("ManifestWork %s is not applied: %s", w.Name, c.Message)
		}
	}
	return metav1.ConditionTrue, ReasonManifestApplied, MessageManifestApplied
}

// ownedBy says whether w is controlled by s's MCA.
func ownedBy(w *workv1.ManifestWork, s *state) bool {
	ref := metav1.GetControllerOf(w)
	return ref != nil && ref.UID == s.mca.UID
}

// applyWork creates want, or updates the work of that name when what this
// controller would write changed (RenderedHashAnnotation).
func (r *Reconciler) applyWork(ctx context.Context, s *state, want *workv1.ManifestWork) error {
	have := s.works[want.Name]
	if have == nil {
		if err := r.Client.Create(ctx, want.DeepCopy()); err != nil {
			return fmt.Errorf("create ManifestWork %s/%s: %w", want.Namespace, want.Name, err)
		}
		s.written[want.Name] = true
		return nil
	}
	if have.Annotations[RenderedHashAnnotation] == want.Annotations[RenderedHashAnnotation] && ownedBy(have, s) {
		return nil
	}
	w := have.DeepCopy()
	w.Spec = want.Spec
	w.OwnerReferences = want.OwnerReferences
	if w.Labels == nil {
		w.Labels = map[string]string{}
	}
	for k, v := range want.Labels {
		w.Labels[k] = v
	}
	if w.Annotations == nil {
		w.Annotations = map[string]string{}
	}
	delete(w.Annotations, addon.ConfigSpecHashAnnotation)
	for k, v := range want.Annotations {
		w.Annotations[k] = v
	}
	if err := r.Client.Update(ctx, w); err != nil {
		return fmt.Errorf("update ManifestWork %s/%s: %w", w.Namespace, w.Name, err)
	}
	s.written[want.Name] = true
	return nil
}
