package reconcile

import (
	"context"
	"errors"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
)

func TestRunPhases(t *testing.T) {
	var ran []string
	phase := func(name string, after time.Duration, err error) func(context.Context, *[]string) (ctrl.Result, error) {
		return func(_ context.Context, s *[]string) (ctrl.Result, error) {
			*s = append(*s, name)
			return ctrl.Result{RequeueAfter: after}, err
		}
	}
	res, err := RunPhases(context.Background(), &ran, phase("a", time.Minute, nil), phase("b", 0, nil), phase("c", time.Second, nil))
	if err != nil || res.RequeueAfter != time.Second || len(ran) != 3 {
		t.Fatalf("got %v, %v after %v; want the soonest requeue (1s) after all three", res, err, ran)
	}
	ran = nil
	boom := errors.New("boom")
	res, err = RunPhases(context.Background(), &ran, phase("a", time.Minute, nil), phase("b", 0, boom), phase("c", 0, nil))
	if !errors.Is(err, boom) || res.RequeueAfter != 0 || len(ran) != 2 {
		t.Fatalf("got %v, %v after %v; want the error, no requeue, and c not run", res, err, ran)
	}
}
