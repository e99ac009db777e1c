package policy

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	"github.com/flotilla-io/flotilla/internal/policytemplate"
	"github.com/flotilla-io/flotilla/internal/reconcile"
)

// conflictRetry is how soon a reconcile whose write lost a race runs again.
const conflictRetry = time.Second

// Reconciler propagates root Policies to the clusters their Placements
// chose and rolls their compliance up into the root's status.
type Reconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// Recorder emits events once the status they describe is written.
	Recorder events.EventRecorder
	// APIReader reads what hub templates refer to from the API server.
	APIReader client.Reader
	// refs watches what hub templates read; nil watches nothing.
	refs *refWatches
}

// scope is what the phases of one reconcile share.
type scope struct {
	root *policyv1.Policy
	// placements are the bindings that place the root.
	placements []policyv1.Placement
	// clusters are the clusters the root is copied to, sorted.
	clusters []string
	// decided is when the root's Placements last decided (the oldest of
	// their last decisions), grace the longest of their failover graces.
	decided time.Time
	grace   time.Duration
	// copies are the root's replicated policies by cluster namespace, as
	// they are after the writes.
	copies map[string]*policyv1.Policy
	events reconcile.Events
	// hubTemplates says whether the root has hub templates; reader reads
	// what they refer to, refs collects what they read.
	hubTemplates bool
	reader       *objectReader
	refs         []policytemplate.Ref
}

type phase func(ctx context.Context, s *scope) (ctrl.Result, error)

// Reconcile propagates one root policy.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	root := &policyv1.Policy{}
	if err := r.Client.Get(ctx, req.NamespacedName, root); err != nil {
		// A root is deleted only once its copies are (the finalizer): a
		// missing one never had any, or a person copied it by hand.
		if apierrors.IsNotFound(err) {
			r.refs.track(req.NamespacedName, false, nil)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if _, replicated := root.Labels[policyv1.RootPolicyLabel]; replicated {
		return ctrl.Result{}, nil
	}
	if !root.DeletionTimestamp.IsZero() {
		if !controllerutil.ContainsFinalizer(root, finalizer) {
			return ctrl.Result{}, nil
		}
		if err := r.deleteCopies(ctx, rootName(root.Namespace, root.Name), nil); err != nil {
			return ctrl.Result{}, err
		}
		r.refs.track(req.NamespacedName, false, nil)
		controllerutil.RemoveFinalizer(root, finalizer)
		return ctrl.Result{}, client.IgnoreNotFound(r.Client.Update(ctx, root))
	}
	if controllerutil.AddFinalizer(root, finalizer) {
		if err := r.Client.Update(ctx, root); err != nil {
			if apierrors.IsConflict(err) {
				return ctrl.Result{RequeueAfter: conflictRetry}, nil
			}
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}
	s := &scope{root: root, hubTemplates: hasHubTemplates(root), reader: newObjectReader(ctx, r.APIReader)}
	before := root.DeepCopy()
	defer func() {
		result, retErr = reconcile.FinishStatus(ctx, root, r.patchStatus(ctx, before, root), result, retErr, conflictRetry, r.Recorder, s.events)
	}()
	return reconcile.RunPhases(ctx, s, r.findTargets, r.replicate, r.setStatus)
}

// patchStatus writes the status as a merge patch of what changed. Only
// this controller writes a root policy's status.
func (r *Reconciler) patchStatus(ctx context.Context, before, p *policyv1.Policy) error {
	if equality.Semantic.DeepEqual(before.Status, p.Status) {
		return nil
	}
	if err := r.Client.Status().Patch(ctx, p, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("patch status of Policy %s/%s: %w", p.Namespace, p.Name, err)
	}
	return nil
}

// rootName is the name of a root's copies and the value of their RootPolicyLabel.
func rootName(ns, name string) string { return ns + "." + name }
