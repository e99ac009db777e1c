package reconcile

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
)

func TestFinishStatus(t *testing.T) {
	gr := schema.GroupResource{Resource: "things"}
	phaseErr := errors.New("phase failed")
	writeErr := errors.New("write failed")
	tests := []struct {
		name       string
		writeErr   error
		phaseErr   error
		wantResult ctrl.Result
		wantErrs   []error
		wantEvents int
	}{
		{"written: the phases' result, and the events", nil, nil, ctrl.Result{RequeueAfter: time.Minute}, nil, 2},
		{"written after a failed phase: its error, and the events", nil, phaseErr, ctrl.Result{RequeueAfter: time.Minute}, []error{phaseErr}, 2},
		{"gone: quietly done", apierrors.NewNotFound(gr, "x"), phaseErr, ctrl.Result{}, nil, 0},
		{"conflict: again after the retry", apierrors.NewConflict(gr, "x", errors.New("changed")), nil, ctrl.Result{RequeueAfter: time.Second}, nil, 0},
		{"another write error: joined to the phases'", writeErr, phaseErr, ctrl.Result{}, []error{phaseErr, writeErr}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := events.NewFakeRecorder(10)
			var evs Events
			evs.Add(corev1.EventTypeNormal, "One", "Act", "first %d", 1)
			evs.Add(corev1.EventTypeWarning, "Two", "Act", "second")
			obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "x"}}
			res, err := FinishStatus(context.Background(), obj, tt.writeErr, ctrl.Result{RequeueAfter: time.Minute}, tt.phaseErr, time.Second, rec, evs)
			if res != tt.wantResult {
				t.Errorf("result = %v, want %v", res, tt.wantResult)
			}
			if (err == nil) != (len(tt.wantErrs) == 0) {
				t.Errorf("error = %v, want %v", err, tt.wantErrs)
			}
			for _, want := range tt.wantErrs {
				if !errors.Is(err, want) {
					t.Errorf("error = %v, want it to hold %v", err, want)
				}
			}
			if got := len(rec.Events); got != tt.wantEvents {
				t.Errorf("%d events emitted, want %d", got, tt.wantEvents)
			}
		})
	}
}
