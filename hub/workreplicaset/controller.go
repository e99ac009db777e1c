package workreplicaset

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	ctrlreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/hub/failover"
	"github.com/flotilla-io/flotilla/hub/workreplicaset/health"
	"github.com/flotilla-io/flotilla/hub/workreplicaset/render"
	"github.com/flotilla-io/flotilla/internal/reconcile"
)

// Reconciler fans ManifestWorkReplicaSets out to ManifestWorks and rolls
// their changes out.
type Reconciler struct {
	// Client reads replica sets, Placements, PlacementDecisions and
	// ManagedClusters from the manager's cache and writes replica sets.
	Client client.Client
	// Works reads ManifestWorks from a cache that holds only those of
	// replica sets, indexed by owner.
	Works client.Reader
	// Revisions reads ControllerRevisions from a cache that holds only
	// those of replica sets, indexed by owner.
	Revisions client.Reader
	// Writer writes ManifestWorks, with a client-side rate limit of its
	// own so that a large fan-out does not starve the other controllers.
	Writer client.Client
	// Recorder emits events once the status they describe is written.
	Recorder events.EventRecorder
	// Health runs the replica sets' health checks (nil: none is run).
	Health *health.Checker

	// written are works written and not yet seen in the Works cache.
	written writtenWorks
	// writtenRevisions are revisions written and not yet seen in the
	// Revisions cache.
	writtenRevisions writtenRevisions
}

var _ ctrlreconcile.Reconciler = &Reconciler{}

// scope is what the phases of one reconcile share.
type scope struct {
	mwrs *workv1alpha1.ManifestWorkReplicaSet
	now  time.Time
	// owner is the value of ManifestWorkReplicaSetLabel on its works.
	owner string
	// placements are the PlacementRefs with what was found for each.
	placements []*placementTarget
	// chosen maps each chosen cluster to the placement it is rolled out
	// by: the first that chose it.
	chosen map[string]*placementTarget
	// clusters are the chosen clusters as rendering needs them.
	clusters []render.Cluster
	// rendered is the ManifestWork spec of each chosen cluster, from
	// revision rendering.
	rendered map[string]workv1.ManifestWorkSpec
	// revisions are the replica set's revisions, oldest first; current is
	// that of its spec; rendering is the one the works are rendered from:
	// current, or while current is rolled back the revision rolled back to.
	revisions          []*appsv1.ControllerRevision
	current, rendering *appsv1.ControllerRevision
	// works are the replica set's ManifestWorks by cluster, as they are
	// after this reconcile's writes.
	works map[string]*workv1.ManifestWork
	// invalid says why the spec can never be rolled out as written.
	invalid error
	// conflicts are clusters whose namespace holds a ManifestWork of the
	// same name that is not this replica set's.
	conflicts []string
	// missingNamespace are clusters whose hub namespace does not exist yet.
	missingNamespace []string
	// kept are the clusters that left the decisions while the hub tainted
	// them for health and keep their work, and what for.
	kept map[string]failover.Kept
	// rollback is where the rollback of a failed current revision stands
	// (nil: the current revision is not rolled back).
	rollback *rollbackState
	// retry: a write of this reconcile lost a race (a conflict); the later
	// phases write nothing and leave the status as it is, and the
	// reconcile runs again after conflictRetry.
	retry bool
	// checker runs the replica set's health check.
	checker *health.Checker
	events  reconcile.Events
}

// Reconcile fans out one ManifestWorkReplicaSet.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	mwrs := &workv1alpha1.ManifestWorkReplicaSet{}
	if err := r.Client.Get(ctx, req.NamespacedName, mwrs); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	owner := ownerValue(mwrs.Namespace, mwrs.Name)
	if !mwrs.DeletionTimestamp.IsZero() {
		r.written.forget(owner)
		r.writtenRevisions.forget(owner)
		return r.finalize(ctx, mwrs, owner)
	}
	if !controllerutil.ContainsFinalizer(mwrs, workv1alpha1.ManifestWorkReplicaSetFinalizer) {
		before := mwrs.DeepCopy()
		controllerutil.AddFinalizer(mwrs, workv1alpha1.ManifestWorkReplicaSetFinalizer)
		if err := r.Client.Patch(ctx, mwrs, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
			if apierrors.IsConflict(err) {
				return ctrl.Result{RequeueAfter: conflictRetry}, nil
			}
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}
	s := &scope{mwrs: mwrs, now: time.Now(), owner: owner, checker: r.Health}
	before := mwrs.DeepCopy()
	defer func() {
		result, retErr = reconcile.FinishStatus(ctx, mwrs, r.patchStatus(ctx, before, mwrs), result, retErr, conflictRetry, r.Recorder, s.events)
	}()
	return reconcile.RunPhases(ctx, s, r.findTargets, r.syncRevisions, r.listWorks, r.checkRollback, r.syncWorks, r.markComplete, r.setStatus)
}

// patchStatus writes the status as a merge patch of what changed. Only
// this controller writes a replica set's status.
func (r *Reconciler) patchStatus(ctx context.Context, before, mwrs *workv1alpha1.ManifestWorkReplicaSet) error {
	if equality.Semantic.DeepEqual(before.Status, mwrs.Status) {
		return nil
	}
	if err := r.Client.Status().Patch(ctx, mwrs, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("patch status of ManifestWorkReplicaSet %s/%s: %w", mwrs.Namespace, mwrs.Name, err)
	}
	return nil
}

// finalize deletes the works of a replica set being deleted and releases
// it: at once with Background, once they are gone with Foreground.
func (r *Reconciler) finalize(ctx context.Context, mwrs *workv1alpha1.ManifestWorkReplicaSet, owner string) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(mwrs, workv1alpha1.ManifestWorkReplicaSetFinalizer) {
		return ctrl.Result{}, nil
	}
	// From the API server, not the cache: a work created moments ago must
	// not be left behind.
	list := &workv1.ManifestWorkList{}
	if err := r.Writer.List(ctx, list, client.MatchingLabels{workv1.ManifestWorkReplicaSetLabel: owner}); err != nil {
		return ctrl.Result{}, fmt.Errorf("list the ManifestWorks of %s: %w", owner, err)
	}
	works := make([]*workv1.ManifestWork, len(list.Items))
	for i := range list.Items {
		works[i] = &list.Items[i]
	}
	var doomed []*workv1.ManifestWork
	for _, w := range works {
		if w.DeletionTimestamp.IsZero() {
			doomed = append(doomed, w)
		}
	}
	if err := r.deleteWorks(ctx, doomed); err != nil {
		return ctrl.Result{}, err
	}
	if mwrs.Spec.CascadeDeletionPolicy == workv1alpha1.Foreground && len(works) > 0 {
		// The deletion of the last work is a watch event that brings us back.
		klog.FromContext(ctx).V(1).Info("Waiting for ManifestWorks to be removed", "manifestWorkReplicaSet", klog.KObj(mwrs), "count", len(works))
		return ctrl.Result{}, nil
	}
	before := mwrs.DeepCopy()
	controllerutil.RemoveFinalizer(mwrs, workv1alpha1.ManifestWorkReplicaSetFinalizer)
	if err := r.Client.Patch(ctx, mwrs, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	return ctrl.Result{}, nil
}

// ownerValue is the ManifestWorkReplicaSetLabel value of a replica set's works.
func ownerValue(ns, name string) string { return ns + "." + name }
