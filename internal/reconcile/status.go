package reconcile

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Events are the events of one reconcile, held until the status write
// that they describe has succeeded.
type Events []event

type event struct {
	eventtype, reason, action, note string
}

// Add queues an event.
func (e *Events) Add(eventtype, reason, action, format string, args ...any) {
	*e = append(*e, event{eventtype, reason, action, fmt.Sprintf(format, args...)})
}

// FinishStatus ends a reconcile of obj whose deferred status write
// returned writeErr, given the result and error of its phases: an object
// deleted meanwhile ends it quietly, a conflict tries again after
// conflictRetry, another write error joins the phases' error; once the
// write succeeded, the events go out.
func FinishStatus(ctx context.Context, obj client.Object, writeErr error, result ctrl.Result, err error,
	conflictRetry time.Duration, recorder events.EventRecorder, evs Events) (ctrl.Result, error) {
	logger := klog.FromContext(ctx)
	switch {
	case apierrors.IsNotFound(writeErr):
		logger.V(1).Info("Object is gone; nothing is left to write", "object", klog.KObj(obj))
		return ctrl.Result{}, nil
	case apierrors.IsConflict(writeErr):
		// Someone else wrote first; their change brings us back anyway.
		logger.V(1).Info("Object changed while reconciling; retrying", "object", klog.KObj(obj))
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	case writeErr != nil:
		return ctrl.Result{}, errors.Join(err, writeErr)
	}
	for _, e := range evs {
		recorder.Eventf(obj, nil, e.eventtype, e.reason, e.action, "%s", e.note)
	}
	return result, err
}
