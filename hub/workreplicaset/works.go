package workreplicaset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/flotilla-io/flotilla/internal/rollout"
	"maps"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/parallel"
)

// ownWorks lists a replica set's ManifestWorks from the works cache.
func (r *Reconciler) ownWorks(ctx context.Context, owner string) ([]*workv1.ManifestWork, error) {
	list := &workv1.ManifestWorkList{}
	if err := r.Works.List(ctx, list, client.MatchingFields{ownerIndex: owner}); err != nil {
		return nil, fmt.Errorf("list the ManifestWorks of %s: %w", owner, err)
	}
	out := make([]*workv1.ManifestWork, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

// newWork is the ManifestWork of a replica set for a cluster, rendered
// from the revision named revision.
func newWork(mwrs *workv1alpha1.ManifestWorkReplicaSet, owner, cluster, placement, revision string, spec workv1.ManifestWorkSpec, now time.Time) *workv1.ManifestWork {
	return &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: cluster,
			Name:      mwrs.Name,
			Labels: map[string]string{
				workv1.ManifestWorkReplicaSetLabel:              owner,
				workv1.ManifestWorkReplicaSetPlacementNameLabel: placement,
			},
			Annotations: map[string]string{
				workv1alpha1.RolloutTimeAnnotation: now.UTC().Format(time.RFC3339),
				workv1alpha1.RevisionAnnotation:    revision,
			},
		},
		Spec: spec,
	}
}

// updatedWork is cur with spec, rendered from the revision named
// revision, written now, for placement.
func updatedWork(cur *workv1.ManifestWork, placement, revision string, spec workv1.ManifestWorkSpec, now time.Time) *workv1.ManifestWork {
	w := cur.DeepCopy()
	w.Labels = maps.Clone(cur.Labels)
	w.Labels[workv1.ManifestWorkReplicaSetPlacementNameLabel] = placement
	if w.Annotations == nil {
		w.Annotations = map[string]string{}
	}
	w.Annotations[workv1alpha1.RolloutTimeAnnotation] = now.UTC().Format(time.RFC3339)
	w.Annotations[workv1alpha1.RevisionAnnotation] = revision
	w.Spec = spec
	return w
}

// SpecEqual compares two ManifestWork specs as JSON documents, so that the
// API server's re-encoding of the manifests (key order, spacing) does not
// count as a difference. The CLI uses it to tell which clusters carry the
// current spec, as the hub counts them.
func SpecEqual(a, b *workv1.ManifestWorkSpec) bool {
	// Both usually come from the API server, encoded alike: compare the
	// bytes first, and decode only when they differ.
	if equality.Semantic.DeepEqual(a, b) {
		return true
	}
	return reflect.DeepEqual(normalized(a), normalized(b))
}

func normalized(spec *workv1.ManifestWorkSpec) any {
	raw, err := json.Marshal(spec)
	if err != nil {
		return err.Error()
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return err.Error()
	}
	return v
}

// stateOf is what the rollout knows of cluster's work w (nil: none yet).
// Available means Available for the work's generation and healthy by the
// replica set's health check (healthy reads it; nil: no check).
func stateOf(cluster string, g rollout.Group, w *workv1.ManifestWork, rendered *workv1.ManifestWorkSpec, healthy func(*workv1.ManifestWork) bool) rollout.Cluster {
	c := rollout.Cluster{Name: cluster, Group: g}
	if w == nil || rendered == nil {
		return c
	}
	c.Updated = SpecEqual(&w.Spec, rendered)
	c.PushedAt = PushedAt(w)
	c.AvailableSince, c.Available = availableSince(w)
	if c.Available && c.Updated && healthy != nil && !healthy(w) {
		c.Available, c.AvailableSince = false, time.Time{}
	}
	if d := currentCondition(w, workv1.WorkDegraded); d != nil && d.Status == metav1.ConditionTrue {
		c.Degraded = true
	}
	return c
}

// currentCondition returns a condition of w only if it was observed for
// w's current generation: older ones say nothing about the current spec.
func currentCondition(w *workv1.ManifestWork, condType string) *metav1.Condition {
	cond := meta.FindStatusCondition(w.Status.Conditions, condType)
	if cond == nil || cond.ObservedGeneration != w.Generation {
		return nil
	}
	return cond
}

// availableSince says whether w is Applied and Available for its current
// generation and, if so, since when.
func availableSince(w *workv1.ManifestWork) (time.Time, bool) {
	applied := currentCondition(w, workv1.WorkApplied)
	avail := currentCondition(w, workv1.WorkAvailable)
	if applied == nil || avail == nil || applied.Status != metav1.ConditionTrue || avail.Status != metav1.ConditionTrue {
		return time.Time{}, false
	}
	if avail.LastTransitionTime.After(applied.LastTransitionTime.Time) {
		return avail.LastTransitionTime.Time, true
	}
	return applied.LastTransitionTime.Time, true
}

// isAvailable says whether w is Applied and Available for its generation.
func isAvailable(w *workv1.ManifestWork) bool {
	if w == nil {
		return false
	}
	_, ok := availableSince(w)
	return ok
}

// PushedAt is when the replica set controller last wrote w's spec (its
// creation when the annotation is missing or unreadable): progressDeadline
// and minSuccessTime count from it.
func PushedAt(w *workv1.ManifestWork) time.Time {
	if t, err := time.Parse(time.RFC3339, w.Annotations[workv1alpha1.RolloutTimeAnnotation]); err == nil {
		return t
	}
	return w.CreationTimestamp.Time
}

// deleteWorks deletes works, in parallel.
func (r *Reconciler) deleteWorks(ctx context.Context, works []*workv1.ManifestWork) error {
	jobs := make([]func(context.Context) error, len(works))
	for i, w := range works {
		jobs[i] = func(ctx context.Context) error {
			if err := r.Writer.Delete(ctx, w); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("delete ManifestWork %s/%s: %w", w.Namespace, w.Name, err)
			}
			return nil
		}
	}
	return errors.Join(parallel.Run(ctx, writeWorkers, jobs)...)
}
