package work

import (
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// workChanged passes the ManifestWork events a reconcile has to answer:
// creations, deletions, and updates of anything but the status the agent
// itself writes. A relist after the hub was unreachable repeats every work
// unchanged; those pass too, so that status catches up at once.
func workChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			old, updated := e.ObjectOld, e.ObjectNew
			switch {
			case old.GetResourceVersion() == updated.GetResourceVersion():
				return true
			case old.GetGeneration() != updated.GetGeneration():
				return true
			case !old.GetDeletionTimestamp().Equal(updated.GetDeletionTimestamp()):
				return true
			case slices.Contains(old.GetFinalizers(), workv1.ManifestWorkFinalizer) && !slices.Contains(updated.GetFinalizers(), workv1.ManifestWorkFinalizer):
				return true
			}
			return false
		},
	}
}
