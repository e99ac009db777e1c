package work

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/internal/reconcile"
)

// reconciler applies one hub session's ManifestWorks.
type reconciler struct {
	*Agent
	// hub reads ManifestWorks from the cache of the cluster namespace and
	// writes them; hubReader reads the hub itself.
	hub       client.Client
	hubReader client.Reader
	recorder  events.EventRecorder
	hubHash   string
	agentID   string
	agentKey  string
	watcher   *watcher
	states    *stateStore
}

// scope is one reconcile of one work.
type scope struct {
	// work is the ManifestWork; its status is what the pass reports.
	work  *workv1.ManifestWork
	state *workState
	// manifests are the work's manifests in spec order; order is the
	// order to apply them in.
	manifests []*manifest
	order     []int
	// applied is the spoke's AppliedManifestWork of the work.
	applied *workv1.AppliedManifestWork
	// refused says why nothing of the work may be applied (its executor
	// may not, or another agent holds its AppliedManifestWork), or is empty.
	refused string
	// leftover are the AppliedManifestWork entries of objects that left
	// the work and are not deleted yet (or not looked at: see prune).
	leftover []workv1.AppliedManifestResourceMeta
	// requeue is when to look at the work again at the latest.
	requeue time.Duration
	// events are emitted once the status that they describe is written.
	events []workEvent
	now    time.Time
}

// workEvent is an event about the work, for the hub.
type workEvent struct{ eventType, reason, note string }

// requeueAfter makes the work be looked at again within d.
func (s *scope) requeueAfter(d time.Duration) {
	if s.requeue == 0 || d < s.requeue {
		s.requeue = d
	}
}

// Reconcile brings the spoke in line with one ManifestWork and reports
// what it found: get the work → finalizer → one status patch at the end
// → phases. A work that is gone leaves its AppliedManifestWork to the
// evictor.
func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, err error) {
	work := &workv1.ManifestWork{}
	if err := r.hub.Get(ctx, req.NamespacedName, work); err != nil {
		if apierrors.IsNotFound(err) {
			r.states.forget(req.Name)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	s := &scope{work: work, state: r.states.get(work.Name), now: time.Now()}
	if s.state.written.Stale(work.ResourceVersion) {
		return ctrl.Result{RequeueAfter: reconcile.StaleRequeue}, nil
	}
	if !work.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, s)
	}
	if err := r.ensureFinalizer(ctx, work); err != nil {
		return ctrl.Result{}, err
	}

	before := work.DeepCopy()
	defer func() {
		perr := r.patchStatus(ctx, before, s.work)
		s.state.written.Record(s.work.ResourceVersion)
		if perr != nil {
			// The error's backoff replaces the result's requeue.
			res, err = ctrl.Result{}, errors.Join(err, perr)
			return
		}
		r.emit(s)
	}()
	for _, phase := range []func(context.Context, *scope) error{
		r.plan, r.checkExecutor, r.ensureApplied, r.apply, r.prune, r.recordApplied, r.report, r.expire,
	} {
		if err := phase(ctx, s); err != nil {
			return ctrl.Result{}, err
		}
	}
	s.requeueAfter(r.resync())
	return ctrl.Result{RequeueAfter: s.requeue}, nil
}

// resync is the resync interval with up to 10 % jitter, so that works
// created together do not stay in step.
func (r *reconciler) resync() time.Duration {
	d := r.cfg.ResyncInterval
	return d + time.Duration(rand.Int64N(int64(d)/10+1))
}

// ensureFinalizer holds the work until the agent has handled its deletion.
func (r *reconciler) ensureFinalizer(ctx context.Context, work *workv1.ManifestWork) error {
	if controllerutil.ContainsFinalizer(work, workv1.ManifestWorkFinalizer) {
		return nil
	}
	before := work.DeepCopy()
	controllerutil.AddFinalizer(work, workv1.ManifestWorkFinalizer)
	if err := r.hub.Patch(ctx, work, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("add the finalizer to ManifestWork %s: %w", klog.KObj(work), err)
	}
	return nil
}

// patchStatus writes the status when it changed, and only then. The agent
// is the only writer of a ManifestWork's status.
func (r *reconciler) patchStatus(ctx context.Context, before, work *workv1.ManifestWork) error {
	if equality.Semantic.DeepEqual(before.Status, work.Status) {
		return nil
	}
	if err := r.hub.Status().Patch(ctx, work, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("update the status of ManifestWork %s: %w", klog.KObj(work), err)
	}
	klog.FromContext(ctx).V(2).Info("Updated the ManifestWork status")
	return nil
}

// emit sends the pass's events, once their status is written.
func (r *reconciler) emit(s *scope) {
	for _, e := range s.events {
		r.recorder.Eventf(s.work, nil, e.eventType, e.reason, "Reconcile", "%s", e.note)
	}
}

// plan decodes the manifests and settles the order to apply them in.
func (r *reconciler) plan(_ context.Context, s *scope) error {
	for i, m := range s.work.Spec.Workload.Manifests {
		s.manifests = append(s.manifests, r.planManifest(i, m, s.work.Spec.ManifestConfigs))
	}
	s.order = applyOrder(s.manifests)
	return nil
}
