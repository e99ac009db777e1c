package clusterset

import (
	"context"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
)

// conflictRetry is how soon a reconcile whose write lost a race runs again.
const conflictRetry = time.Second

// SetReconciler keeps the "default" and "global" sets and the
// ClusterSetEmpty condition of every set.
type SetReconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// Recorder emits events once the write they describe succeeded.
	Recorder events.EventRecorder
}

// SetupWithManager registers the reconciler and its watches.
func (r *SetReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("managedclusterset").
		For(&clusterv1beta2.ManagedClusterSet{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&clusterv1.ManagedCluster{}, r.recountSets(), builder.WithPredicates(clusterLabelsChanged())).
		// The kept sets are checked once at start, whether or not they exist.
		WatchesRawSource(source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
			for name := range keptSets {
				q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Name: name}})
			}
			return nil
		})).
		Complete(r)
}

// clusterLabelsChanged passes the cluster events that can change set
// membership: creation, deletion and label changes.
func clusterLabelsChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			return !maps.Equal(e.ObjectOld.GetLabels(), e.ObjectNew.GetLabels())
		},
	}
}

// recountDelay gathers the cluster events of a burst (a fleet joining)
// into one recount of each set a second, rather than one per event: a
// recount lists every cluster, and writes the count.
const recountDelay = time.Second

// recountSets queues every set, recountDelay after a cluster event: any
// of them may select the cluster. A set already waiting is not queued
// again.
func (r *SetReconciler) recountSets() handler.EventHandler {
	type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]
	enqueue := func(ctx context.Context, q queue) {
		for _, req := range r.allSets(ctx, nil) {
			q.AddAfter(req, recountDelay)
		}
	}
	return handler.Funcs{
		CreateFunc:  func(ctx context.Context, _ event.CreateEvent, q queue) { enqueue(ctx, q) },
		UpdateFunc:  func(ctx context.Context, _ event.UpdateEvent, q queue) { enqueue(ctx, q) },
		DeleteFunc:  func(ctx context.Context, _ event.DeleteEvent, q queue) { enqueue(ctx, q) },
		GenericFunc: func(ctx context.Context, _ event.GenericEvent, q queue) { enqueue(ctx, q) },
	}
}

// allSets names every set.
func (r *SetReconciler) allSets(ctx context.Context, _ client.Object) []reconcile.Request {
	list := &clusterv1beta2.ManagedClusterSetList{}
	if err := r.Client.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		klog.FromContext(ctx).Error(err, "Cannot list ManagedClusterSets to recount their members")
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for _, s := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Name: s.Name}})
	}
	return reqs
}

// Reconcile creates a missing kept set, puts a kept set's spec back, and
// writes the ClusterSetEmpty condition of a set.
func (r *SetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	set := &clusterv1beta2.ManagedClusterSet{}
	if err := r.Client.Get(ctx, req.NamespacedName, set); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, r.restore(ctx, req.Name)
		}
		return ctrl.Result{}, fmt.Errorf("get ManagedClusterSet %s: %w", req.Name, err)
	}
	if !set.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	before := set.DeepCopy()
	specReverted := revertSpec(set)
	count := 0
	sel, selErr := Selector(set)
	if selErr == nil {
		list := &clusterv1.ManagedClusterList{}
		if err := r.Client.List(ctx, list, client.MatchingLabelsSelector{Selector: sel}, client.UnsafeDisableDeepCopy); err != nil {
			return ctrl.Result{}, fmt.Errorf("list the members of ManagedClusterSet %s: %w", set.Name, err)
		}
		count = len(list.Items)
	}
	meta.SetStatusCondition(&set.Status.Conditions, emptyCondition(count, selErr, set.Generation))

	if err := r.patch(ctx, before, set); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		return ctrl.Result{}, err
	}
	if specReverted {
		r.Recorder.Eventf(set, nil, corev1.EventTypeWarning, reasonSetRestored, "RestoreSpec",
			"The hub keeps ManagedClusterSet %s: its spec was put back", set.Name)
	}
	return ctrl.Result{}, nil
}

// restore creates a kept set that is missing.
func (r *SetReconciler) restore(ctx context.Context, name string) error {
	want, kept := keptSets[name]
	if !kept {
		return nil
	}
	set := want()
	if err := r.Client.Create(ctx, set); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return fmt.Errorf("create ManagedClusterSet %s: %w", name, err)
	}
	klog.FromContext(ctx).Info("Created the ManagedClusterSet the hub keeps", "managedClusterSet", klog.KObj(set))
	r.Recorder.Eventf(set, nil, corev1.EventTypeNormal, reasonSetRestored, "Create", "The hub keeps ManagedClusterSet %s: created it", name)
	return nil
}

// revertSpec puts the spec of a kept set back and says whether it had changed.
func revertSpec(set *clusterv1beta2.ManagedClusterSet) bool {
	want, kept := keptSets[set.Name]
	if !kept {
		return false
	}
	spec := want().Spec
	// Managed namespaces are the user's to choose, also on kept sets.
	spec.ManagedNamespaces = set.Spec.ManagedNamespaces
	if equality.Semantic.DeepEqual(spec, set.Spec) {
		return false
	}
	set.Spec = spec
	return true
}

// patch writes what changed: the spec in one merge patch, the status in
// another, both guarded by the resourceVersion they were computed from.
func (r *SetReconciler) patch(ctx context.Context, before, set *clusterv1beta2.ManagedClusterSet) error {
	status := set.Status.DeepCopy()
	base := before
	if !equality.Semantic.DeepEqual(before.Spec, set.Spec) {
		if err := r.Client.Patch(ctx, set, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
			return fmt.Errorf("patch ManagedClusterSet %s: %w", set.Name, err)
		}
		base = set.DeepCopy()
		set.Status = *status
	}
	if equality.Semantic.DeepEqual(base.Status, set.Status) {
		return nil
	}
	if err := r.Client.Status().Patch(ctx, set, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("patch status of ManagedClusterSet %s: %w", set.Name, err)
	}
	return nil
}
