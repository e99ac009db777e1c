package work

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// maxConflicts is how often an update is tried again when the object
// changed between reading and writing it.
const maxConflicts = 3

// update is the Update strategy: create the object, or merge the manifest
// onto the live object, keeping the fields the manifest does not set, and
// write it when that changes anything.
func (r *reconciler) update(ctx context.Context, s *scope, m *manifest, live *unstructured.Unstructured) applyResult {
	if live == nil {
		return r.create(ctx, s, m)
	}
	want := r.desired(s, m)
	for attempt := 1; ; attempt++ {
		d := r.driftOf(s, m, live, want.Object)
		if d == nil && contains(want.Object, live.Object) && hasOwner(live, s.applied.UID) {
			return applyResult{live: live, owned: true}
		}
		merged := &unstructured.Unstructured{Object: merge(live.Object, want.Object).(map[string]any)}
		addOwner(merged, s.applied)
		updated, err := r.resource(m.key).Update(ctx, merged, metav1.UpdateOptions{FieldManager: workv1.DefaultFieldManager})
		if err == nil {
			if d != nil && updated.GetResourceVersion() == live.GetResourceVersion() {
				// The server stored nothing new: the difference was only in
				// how it writes values (a quantity, a dropped default).
				d = nil
			}
			return applyResult{live: updated, owned: true, drift: d}
		}
		if apierrors.IsConflict(err) && attempt < maxConflicts {
			fresh, gerr := r.resource(m.key).Get(ctx, m.key.Name, metav1.GetOptions{})
			if gerr == nil {
				live = fresh
				continue
			}
			err = gerr
		}
		if d != nil {
			d.err = err
		}
		return applyResult{live: live, owned: hasOwner(live, s.applied.UID), drift: d, err: fmt.Errorf("update %s: %w", describe(m.key), err)}
	}
}
