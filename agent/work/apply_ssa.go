package work

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// serverSideApply is the ServerSideApply strategy: apply the manifest with
// field manager work-agent (or the one given, which must begin with it),
// forcing ownership of conflicting fields only when asked. A conflict is
// the manifest's failure, with the conflicting managers in the message.
func (r *reconciler) serverSideApply(ctx context.Context, s *scope, m *manifest, live *unstructured.Unstructured) applyResult {
	manager, force := workv1.DefaultFieldManager, false
	if c := m.config.UpdateStrategy.ServerSideApply; c != nil {
		if c.FieldManager != "" {
			manager = c.FieldManager
		}
		force = c.Force
	}
	if !strings.HasPrefix(manager, workv1.DefaultFieldManager) {
		return applyResult{live: live, err: fmt.Errorf("field manager %q must begin with %q", manager, workv1.DefaultFieldManager)}
	}
	want := r.desired(s, m)
	var d *drift
	switch {
	case live == nil && s.wasApplied(m):
		d = &drift{fields: []string{workv1.DriftWholeObject}}
	case live != nil:
		d = r.driftOf(s, m, live, want.Object)
		if d == nil && contains(want.Object, live.Object) && hasOwner(live, s.applied.UID) {
			return applyResult{live: live, owned: true}
		}
	}
	addOwner(want, s.applied)
	applied, err := r.resource(m.key).Apply(ctx, m.key.Name, want, metav1.ApplyOptions{FieldManager: manager, Force: force})
	if err != nil {
		if d != nil {
			d.err = err
		}
		owned := live != nil && hasOwner(live, s.applied.UID)
		return applyResult{live: live, owned: owned, drift: d, err: fmt.Errorf("apply %s: %w", describe(m.key), err)}
	}
	if d != nil && live != nil && applied.GetResourceVersion() == live.GetResourceVersion() {
		d = nil
	}
	return applyResult{live: applied, owned: true, drift: d}
}
