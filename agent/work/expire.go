package work

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// expire deletes the work on the hub once its Complete condition has been
// true for deleteOption.ttlSecondsAfterFinished; its deletion then runs
// as any other.
func (r *reconciler) expire(ctx context.Context, s *scope) error {
	opt := s.work.Spec.DeleteOption
	if opt == nil || opt.TTLSecondsAfterFinished == nil {
		return nil
	}
	c := meta.FindStatusCondition(s.work.Status.Conditions, workv1.WorkComplete)
	if c == nil || c.Status != "True" {
		return nil
	}
	left := time.Duration(*opt.TTLSecondsAfterFinished)*time.Second - s.now.Sub(c.LastTransitionTime.Time)
	if left > 0 {
		s.requeueAfter(left)
		return nil
	}
	err := r.hub.Delete(ctx, s.work, client.Preconditions{UID: &s.work.UID})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete ManifestWork %s, complete for %ds: %w", klog.KObj(s.work), *opt.TTLSecondsAfterFinished, err)
	}
	klog.FromContext(ctx).Info("Deleted a ManifestWork whose time to live after completion ran out", "ttlSecondsAfterFinished", *opt.TTLSecondsAfterFinished)
	return nil
}
