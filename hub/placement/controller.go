package placement

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/hub/placement/scheduler"
	"github.com/flotilla-io/flotilla/internal/reconcile"
)

// conflictRetry is how soon a reconcile whose write lost a race runs again.
const conflictRetry = time.Second

// Reconciler schedules Placements and writes their PlacementDecisions and status.
type Reconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// Scheme maps the types for owner references.
	Scheme *runtime.Scheme
	// Recorder emits events once the status they describe is written.
	Recorder events.EventRecorder
}

// scope is what the phases of one reconcile share.
type scope struct {
	placement *clusterv1beta1.Placement
	now       time.Time
	// previous are the clusters of the current decisions.
	previous sets.Set[string]
	result   scheduler.Result
	events   reconcile.Events
}

type phase func(ctx context.Context, s *scope) (ctrl.Result, error)

// Reconcile schedules one Placement.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	p := &clusterv1beta1.Placement{}
	if err := r.Client.Get(ctx, req.NamespacedName, p); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !p.DeletionTimestamp.IsZero() {
		// Its PlacementDecisions go with it: it controls them.
		return ctrl.Result{}, nil
	}
	s := &scope{placement: p, now: time.Now()}
	before := p.DeepCopy()
	defer func() {
		result, retErr = reconcile.FinishStatus(ctx, p, r.patchStatus(ctx, before, p), result, retErr, conflictRetry, r.Recorder, s.events)
	}()
	return reconcile.RunPhases(ctx, s, r.schedule, r.writeDecisions, r.setStatus)
}

// patchStatus writes the status as a merge patch of what changed. Only
// this controller writes a Placement's status.
func (r *Reconciler) patchStatus(ctx context.Context, before, p *clusterv1beta1.Placement) error {
	if equality.Semantic.DeepEqual(before.Status, p.Status) {
		return nil
	}
	if err := r.Client.Status().Patch(ctx, p, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("patch status of Placement %s/%s: %w", p.Namespace, p.Name, err)
	}
	return nil
}
