// Package reconcile holds the pieces of the reconciler skeleton that every
// Flotilla controller shares (see docs: get, finalizer, deferred status
// patch, a list of phase functions).
package reconcile

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
)

// RunPhases runs the phases in order on the reconcile's scope s, each
// relying on the ones before, and stops at the first error. It returns the
// soonest requeue any phase asked for.
func RunPhases[S any](ctx context.Context, s S, phases ...func(context.Context, S) (ctrl.Result, error)) (ctrl.Result, error) {
	var result ctrl.Result
	for _, phase := range phases {
		r, err := phase(ctx, s)
		if err != nil {
			return ctrl.Result{}, err
		}
		if r.RequeueAfter > 0 && (result.RequeueAfter == 0 || r.RequeueAfter < result.RequeueAfter) {
			result.RequeueAfter = r.RequeueAfter
		}
	}
	return result, nil
}
