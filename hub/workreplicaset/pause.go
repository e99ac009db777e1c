package workreplicaset

import (
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/rollout"
)

// pausedReason is the stop reason of a paused rollout.
const pausedReason = "paused (annotation " + workv1alpha1.PausedAnnotation + "=true)"

// paused says whether the replica set's rollout is paused.
func paused(mwrs *workv1alpha1.ManifestWorkReplicaSet) bool {
	return mwrs.Annotations[workv1alpha1.PausedAnnotation] == "true"
}

// pausedIf holds the rollout step back when p is set: nothing is pushed,
// and an unfinished rollout reads as stopped, saying why. A finished one
// stays finished.
func pausedIf(r rollout.Result, p bool) rollout.Result {
	if !p || r.Complete {
		return r
	}
	r.Push = nil
	r.Stopped = true
	r.StopReason = pausedReason
	return r
}
