package template

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/internal/addon"
)

// preDelete runs the pre-delete hook of a deleting MCA that holds the
// finalizer: it creates the hook work, and once the work is Available and
// every Job completed and every Pod succeeded, says so and lets the MCA go.
func (r *Reconciler) preDelete(ctx context.Context, s *state) (bool, error) {
	if s.mca.DeletionTimestamp == nil || s.hook == nil || !slices.Contains(s.mca.Finalizers, addon.PreDeleteHookFinalizer) {
		return s.mca.DeletionTimestamp != nil, nil
	}
	if err := r.applyWork(ctx, s, s.hook); err != nil {
		return true, err
	}
	done, why := hookCompleted(s.works[s.hook.Name], s.written[s.hook.Name])
	c := metav1.Condition{
		Type: addon.ConditionHookManifestCompleted, Status: metav1.ConditionFalse, Reason: ReasonHookNotCompleted,
		ObservedGeneration: s.mca.Generation, Message: "the pre-delete hook is not completed: " + why,
	}
	if done {
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, ReasonHookCompleted, "the pre-delete hook is completed"
		s.releaseFinalizer = true
	}
	meta.SetStatusCondition(&s.mca.Status.Conditions, c)
	return true, nil
}

// hookCompleted says whether the hook work w reports every Job complete
// and every Pod succeeded, and if not, why.
func hookCompleted(w *workv1.ManifestWork, written bool) (bool, string) {
	if w == nil || written {
		return false, "its ManifestWork was just written"
	}
	if !meta.IsStatusConditionTrue(w.Status.Conditions, workv1.WorkAvailable) {
		return false, fmt.Sprintf("ManifestWork %s is not Available yet", w.Name)
	}
	reported := 0
	for _, m := range w.Status.ResourceStatus.Manifests {
		rm := m.ResourceMeta
		var key, want string
		switch {
		case rm.Group == "batch" && rm.Kind == "Job":
			key, want = "JobComplete", "True"
		case rm.Group == "" && rm.Kind == "Pod":
			key, want = "PodPhase", "Succeeded"
		default:
			continue
		}
		reported++
		v := feedback(m.StatusFeedback.Values, key)
		if v == nil || v.String == nil || *v.String != want {
			return false, fmt.Sprintf("%s %s/%s has not reported %s=%s", rm.Kind, rm.Namespace, rm.Name, key, want)
		}
	}
	if reported < len(w.Spec.Workload.Manifests) {
		return false, "not every hook has reported its status"
	}
	return true, ""
}

func feedback(values []workv1.FeedbackValue, name string) *workv1.FieldValue {
	for i := range values {
		if values[i].Name == name {
			return &values[i].Value
		}
	}
	return nil
}
