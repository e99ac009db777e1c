package registration

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	ctrlreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/internal/reconcile"
)

// conflictRetry is how soon a reconcile whose write lost a race with
// another writer runs again.
const conflictRetry = time.Second

// ClusterReconciler grants and revokes an agent's access as its
// ManagedCluster's spec.hubAcceptsClient says, watches its lease, keeps the
// hub taints in step, puts a cluster in no set into "default", and tears
// everything down when the cluster is deleted.
type ClusterReconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// APIReader reads from the API server, to confirm an expired lease.
	APIReader client.Reader
	// Scheme maps the types for owner references.
	Scheme *runtime.Scheme
	// Recorder emits events once the status they describe is written.
	Recorder events.EventRecorder

	// written tells a cached cluster older than this controller's own
	// last write of it, not to be reconciled again.
	written reconcile.Written
}

// clusterWorkers is how many clusters are reconciled at once. Each
// cluster's namespace, RBAC and status are its own, so a fleet accepted at
// once waits for the slowest clusters' writes, not for the sum of them
// all (with one worker, 5,000 clusters joined at about 2 a second).
const clusterWorkers = 16

// SetupWithManager registers the reconciler and its watches.
func (r *ClusterReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("managedcluster-registration").
		For(&clusterv1.ManagedCluster{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: clusterWorkers}).
		Owns(&rbacv1.ClusterRole{}).
		Owns(&rbacv1.ClusterRoleBinding{}).
		Owns(&rbacv1.RoleBinding{}).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(clusterOfNamespace),
			builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
				return o.GetLabels()[clusterv1.ClusterNameLabel] == o.GetName()
			}))).
		// A deleted cluster waits for its ManifestWorks to go. Only their
		// metadata is cached: a hub holding 50,000 works needs none of their
		// manifests here.
		Watches(workMetadata(), handler.EnqueueRequestsFromMapFunc(clusterOfNamespace),
			builder.OnlyMetadata, builder.WithPredicates(onlyDeletes)).
		// It waits for its ManagedClusterAddOns first, the same way.
		Watches(addOnMetadata(), handler.EnqueueRequestsFromMapFunc(clusterOfNamespace),
			builder.OnlyMetadata, builder.WithPredicates(onlyDeletes)).
		Complete(r)
}

// onlyDeletes passes only deletions: what a deleted cluster waits for.
var onlyDeletes = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	UpdateFunc:  func(event.UpdateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return true },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// addOnMetadata is a ManagedClusterAddOn with only its metadata.
func addOnMetadata() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(addonv1alpha1.GroupVersion.WithKind("ManagedClusterAddOn"))
	return m
}

// workMetadata is a ManifestWork with only its metadata, for the
// metadata-only cache.
func workMetadata() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(workv1.GroupVersion.WithKind("ManifestWork"))
	return m
}

// clusterOfNamespace maps an object in (or being) a cluster namespace to
// that cluster.
func clusterOfNamespace(_ context.Context, o client.Object) []ctrlreconcile.Request {
	name := o.GetNamespace()
	if name == "" {
		name = o.GetName()
	}
	return []ctrlreconcile.Request{{NamespacedName: types.NamespacedName{Name: name}}}
}

// clusterScope is what the phases of one reconcile share.
type clusterScope struct {
	cluster *clusterv1.ManagedCluster
	now     metav1.Time
	// namespaceReady is set when the cluster namespace exists and is not
	// being deleted.
	namespaceReady bool
	// created is set on a cluster's first reconcile, which adds the
	// finalizer: what it writes is where the cluster starts, not a change.
	created bool
	events  reconcile.Events
}

type clusterPhase func(ctx context.Context, s *clusterScope) (ctrl.Result, error)

// Reconcile brings one ManagedCluster's access, health and taints in line
// with its spec, its lease and its Available condition.
func (r *ClusterReconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	cluster := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			r.written.Forget(req.NamespacedName)
			// Gone without our cleanup (its finalizer was removed by hand):
			// let the garbage collector delete its work RoleBinding.
			return ctrl.Result{}, r.releaseWorkRoleBinding(ctx, req.Name)
		}
		return ctrl.Result{}, fmt.Errorf("get ManagedCluster %s: %w", req.Name, err)
	}

	if r.written.Stale(cluster) {
		return ctrl.Result{RequeueAfter: reconcile.StaleRequeue}, nil
	}

	s := &clusterScope{cluster: cluster, now: metav1.Now()}
	patcher := newClusterPatcher(cluster)
	defer func() {
		perr := patcher.patch(ctx, r.Client, cluster)
		r.written.Record(cluster)
		result, retErr = reconcile.FinishStatus(ctx, cluster, perr, result, retErr, conflictRetry, r.Recorder, s.events)
	}()

	if !cluster.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, s)
	}
	s.created = controllerutil.AddFinalizer(cluster, ClusterFinalizer)
	return runPhases(ctx, s, r.reconcileDefaultSet, r.reconcileAcceptance, r.reconcileLease, r.reconcileTaints)
}

// runPhases runs every phase, joins their errors and returns the soonest
// requeue asked for.
func runPhases(ctx context.Context, s *clusterScope, phases ...clusterPhase) (ctrl.Result, error) {
	var (
		result ctrl.Result
		errs   []error
	)
	for _, phase := range phases {
		r, err := phase(ctx, s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if r.RequeueAfter > 0 && (result.RequeueAfter == 0 || r.RequeueAfter < result.RequeueAfter) {
			result.RequeueAfter = r.RequeueAfter
		}
	}
	if len(errs) > 0 {
		return ctrl.Result{}, errors.Join(errs...)
	}
	return result, nil
}
