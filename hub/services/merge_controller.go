package services

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/mcs"
)

// mergeWorkers is how many services are merged at once.
const mergeWorkers = 4

// MergeReconciler merges, for one service name (<namespace>.<name>), the
// ExportedServices of every cluster into one ImportedService per cluster
// set, and writes each export's verdict. One reconcile covers every set,
// so a cluster moving from one set to another leaves the old set's import
// and joins the new one's in the same pass.
type MergeReconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
}

// SetupWithManager registers the reconciler, its watches and indexes.
func (r *MergeReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	idx := mgr.GetFieldIndexer()
	byName := func(o client.Object) []string { return []string{o.GetName()} }
	if err := idx.IndexField(ctx, &mcsv1alpha1.ExportedService{}, exportNameIndex, byName); err != nil {
		return fmt.Errorf("index ExportedServices by name: %w", err)
	}
	if err := idx.IndexField(ctx, &mcsv1alpha1.ImportedService{}, importNameIndex, byName); err != nil {
		return fmt.Errorf("index ImportedServices by name: %w", err)
	}
	if err := idx.IndexField(ctx, &mcsv1alpha1.ImportedService{}, importClusterIndex, importClusters); err != nil {
		return fmt.Errorf("index ImportedServices by cluster: %w", err)
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("services-merge").
		WithOptions(controller.Options{MaxConcurrentReconciles: mergeWorkers}).
		Watches(&mcsv1alpha1.ExportedService{}, handler.EnqueueRequestsFromMapFunc(serviceOf)).
		Watches(&mcsv1alpha1.ImportedService{}, handler.EnqueueRequestsFromMapFunc(serviceOf)).
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(r.servicesOfCluster),
			builder.WithPredicates(predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
				return mergeRelevant(e.ObjectOld.(*clusterv1.ManagedCluster), e.ObjectNew.(*clusterv1.ManagedCluster))
			}})).
		Watches(&clusterv1beta2.ManagedClusterSet{}, handler.EnqueueRequestsFromMapFunc(r.servicesOfSet),
			builder.WithPredicates(predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
				return exclusive(e.ObjectOld.(*clusterv1beta2.ManagedClusterSet)) != exclusive(e.ObjectNew.(*clusterv1beta2.ManagedClusterSet))
			}})).
		Complete(r)
}

func importClusters(o client.Object) []string {
	imp := o.(*mcsv1alpha1.ImportedService)
	names := make([]string, len(imp.Spec.Clusters))
	for i, c := range imp.Spec.Clusters {
		names[i] = c.Name
	}
	return names
}

// serviceOf is the request of the service an ExportedService or
// ImportedService is about: its name.
func serviceOf(_ context.Context, o client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: o.GetName()}}}
}

// mergeRelevant says whether a cluster's update changes a merge: its set,
// its availability, its deletion.
func mergeRelevant(old, cur *clusterv1.ManagedCluster) bool {
	return old.Labels[clusterv1.ClusterSetLabel] != cur.Labels[clusterv1.ClusterSetLabel] ||
		available(old) != available(cur) ||
		old.DeletionTimestamp.IsZero() != cur.DeletionTimestamp.IsZero()
}

// servicesOfCluster are the services a cluster exports and those imported
// with it, in whichever set.
func (r *MergeReconciler) servicesOfCluster(ctx context.Context, o client.Object) []reconcile.Request {
	exports := &mcsv1alpha1.ExportedServiceList{}
	if err := r.Client.List(ctx, exports, client.InNamespace(o.GetName()), client.UnsafeDisableDeepCopy); err != nil {
		klog.FromContext(ctx).Error(err, "Cannot list the ExportedServices of a cluster", "managedCluster", klog.KObj(o))
	}
	imports := &mcsv1alpha1.ImportedServiceList{}
	if err := r.Client.List(ctx, imports, client.MatchingFields{importClusterIndex: o.GetName()}, client.UnsafeDisableDeepCopy); err != nil {
		klog.FromContext(ctx).Error(err, "Cannot list the ImportedServices of a cluster", "managedCluster", klog.KObj(o))
	}
	return requests(exports.Items, imports.Items)
}

// servicesOfSet are the services the members of a set export and those
// imported into it.
func (r *MergeReconciler) servicesOfSet(ctx context.Context, o client.Object) []reconcile.Request {
	logger := klog.FromContext(ctx)
	clusters := &clusterv1.ManagedClusterList{}
	if err := r.Client.List(ctx, clusters, client.MatchingLabels{clusterv1.ClusterSetLabel: o.GetName()}, client.UnsafeDisableDeepCopy); err != nil {
		logger.Error(err, "Cannot list the members of a ManagedClusterSet", "managedClusterSet", klog.KObj(o))
	}
	var exports []mcsv1alpha1.ExportedService
	for _, c := range clusters.Items {
		list := &mcsv1alpha1.ExportedServiceList{}
		if err := r.Client.List(ctx, list, client.InNamespace(c.Name), client.UnsafeDisableDeepCopy); err != nil {
			logger.Error(err, "Cannot list the ExportedServices of a cluster", "managedCluster", klog.KObj(&c))
		}
		exports = append(exports, list.Items...)
	}
	imports := &mcsv1alpha1.ImportedServiceList{}
	if err := r.Client.List(ctx, imports, client.InNamespace(mcs.SetNamespace(o.GetName())), client.UnsafeDisableDeepCopy); err != nil {
		logger.Error(err, "Cannot list the ImportedServices of a ManagedClusterSet", "managedClusterSet", klog.KObj(o))
	}
	return requests(exports, imports.Items)
}

func requests(exports []mcsv1alpha1.ExportedService, imports []mcsv1alpha1.ImportedService) []reconcile.Request {
	var names []string
	for _, e := range exports {
		names = append(names, e.Name)
	}
	for _, i := range imports {
		names = append(names, i.Name)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	reqs := make([]reconcile.Request, len(names))
	for i, n := range names {
		reqs[i] = reconcile.Request{NamespacedName: types.NamespacedName{Name: n}}
	}
	return reqs
}

// membership is where an export's cluster stands.
type membership struct {
	// set is the exclusive set the cluster is a member of, or "".
	set string
	// why says, when set is "", why the cluster is in none.
	why string
	// available is the cluster's ManagedClusterConditionAvailable.
	available bool
}

// Reconcile merges one service (req.Name is <namespace>.<name>) in every set.
func (r *MergeReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	logger := klog.FromContext(ctx).WithValues("service", req.Name)
	ctx = klog.NewContext(ctx, logger)
	list := &mcsv1alpha1.ExportedServiceList{}
	if err := r.Client.List(ctx, list, client.MatchingFields{exportNameIndex: req.Name}); err != nil {
		return ctrl.Result{}, fmt.Errorf("list the ExportedServices named %s: %w", req.Name, err)
	}
	bySet := map[string][]Export{}
	where := map[string]membership{}
	var exports []*mcsv1alpha1.ExportedService
	for i := range list.Items {
		e := &list.Items[i]
		if !e.DeletionTimestamp.IsZero() {
			continue
		}
		m, err := r.membershipOf(ctx, e.Namespace)
		if err != nil {
			return ctrl.Result{}, err
		}
		exports = append(exports, e)
		where[e.Namespace] = m
		if m.set != "" {
			bySet[m.set] = append(bySet[m.set], Export{Cluster: e.Namespace, Available: m.available, Generation: e.Generation, Spec: &e.Spec})
		}
	}
	verdicts := map[string]Verdict{}
	var errs []error
	for set, members := range bySet {
		merged := Merge(members)
		verdicts[set] = merged.Verdict
		if err := r.writeImport(ctx, set, members[0].Spec, merged.Spec); err != nil {
			errs = append(errs, err)
		}
	}
	if err := r.deleteStaleImports(ctx, req.Name, bySet); err != nil {
		errs = append(errs, err)
	}
	for _, e := range exports {
		if err := r.writeStatus(ctx, e, where[e.Namespace], verdicts); err != nil {
			errs = append(errs, err)
		}
	}
	return quietConflicts(errors.Join(errs...))
}

// conflictRetry is how soon a merge whose write met a newer object than
// the cache held runs again: by then the cache has it.
const conflictRetry = 200 * time.Millisecond

// quietConflicts turns err into a short requeue when every error in it is
// a write conflict: a write from a cache that had not yet seen the latest
// object, as happens when endpoints change faster than the cache catches
// up; the next pass writes once, from the newer object.
func quietConflicts(err error) (ctrl.Result, error) {
	if err == nil {
		return ctrl.Result{}, nil
	}
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	for _, e := range errs {
		if !apierrors.IsConflict(e) {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{RequeueAfter: conflictRetry}, nil
}

// membershipOf says which exclusive set cluster c is in, if any, and
// whether it is available.
func (r *MergeReconciler) membershipOf(ctx context.Context, c string) (membership, error) {
	cluster := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: c}, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			return membership{why: fmt.Sprintf("namespace %s is no ManagedCluster's", c)}, nil
		}
		return membership{}, fmt.Errorf("get ManagedCluster %s: %w", c, err)
	}
	if !cluster.DeletionTimestamp.IsZero() {
		return membership{why: fmt.Sprintf("ManagedCluster %s is being deleted", c)}, nil
	}
	name := cluster.Labels[clusterv1.ClusterSetLabel]
	if name == "" {
		return membership{why: fmt.Sprintf("ManagedCluster %s has no label %s", c, clusterv1.ClusterSetLabel)}, nil
	}
	set := &clusterv1beta2.ManagedClusterSet{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, set); err != nil {
		if apierrors.IsNotFound(err) {
			return membership{why: fmt.Sprintf("ManagedCluster %s is labelled into ManagedClusterSet %s, which does not exist", c, name)}, nil
		}
		return membership{}, fmt.Errorf("get ManagedClusterSet %s: %w", name, err)
	}
	if !exclusive(set) {
		return membership{why: fmt.Sprintf("ManagedClusterSet %s of ManagedCluster %s is no %s set (or is being deleted): only those are cluster sets of multi-cluster services",
			name, c, clusterv1beta2.ExclusiveClusterSetLabel)}, nil
	}
	return membership{set: name, available: available(cluster)}, nil
}

// exclusive says whether set is a cluster set of multi-cluster services:
// an existing ExclusiveClusterSetLabel set.
func exclusive(set *clusterv1beta2.ManagedClusterSet) bool {
	t := set.Spec.ClusterSelector.SelectorType
	return set.DeletionTimestamp.IsZero() && (t == "" || t == clusterv1beta2.ExclusiveClusterSetLabel)
}

// available says whether the hub holds the cluster's lease.
func available(c *clusterv1.ManagedCluster) bool {
	return meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
}

// writeImport creates or updates the ImportedService of set, if it differs.
func (r *MergeReconciler) writeImport(ctx context.Context, set string, svc *mcsv1alpha1.ExportedServiceSpec, spec mcsv1alpha1.ImportedServiceSpec) error {
	spec.ClusterSet, spec.Namespace, spec.Name = set, svc.Namespace, svc.Name
	ns := mcs.SetNamespace(set)
	name := mcs.ObjectName(svc.Namespace, svc.Name)
	labels := map[string]string{mcs.ClusterSetLabel: set, mcs.ServiceNamespaceLabel: svc.Namespace, mcs.ServiceNameLabel: svc.Name}
	got := &mcsv1alpha1.ImportedService{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, got)
	switch {
	case apierrors.IsNotFound(err):
		if err := r.ensureSetNamespace(ctx, set); err != nil {
			return err
		}
		imp := &mcsv1alpha1.ImportedService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}, Spec: spec}
		if err := r.Client.Create(ctx, imp); err != nil {
			return fmt.Errorf("create ImportedService %s/%s: %w", ns, name, err)
		}
		klog.FromContext(ctx).V(1).Info("Imported a service into its cluster set", "importedService", klog.KObj(imp), "clusters", len(spec.Clusters))
		return nil
	case err != nil:
		return fmt.Errorf("get ImportedService %s/%s: %w", ns, name, err)
	}
	if equality.Semantic.DeepEqual(got.Spec, spec) && hasLabels(got.Labels, labels) {
		return nil
	}
	imp := got.DeepCopy()
	imp.Spec = spec
	if imp.Labels == nil {
		imp.Labels = map[string]string{}
	}
	for k, v := range labels {
		imp.Labels[k] = v
	}
	// The cached resourceVersion makes a write from a stale cache a
	// conflict, retried once the cache has caught up, never a second write.
	if err := r.Client.Update(ctx, imp); err != nil {
		return fmt.Errorf("update ImportedService %s/%s: %w", ns, name, err)
	}
	return nil
}

func hasLabels(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// ensureSetNamespace creates set's namespace where the set controller has
// not yet: the first export of a new set need not wait for it.
func (r *MergeReconciler) ensureSetNamespace(ctx context.Context, set string) error {
	ns := &corev1.Namespace{}
	err := r.Client.Get(ctx, client.ObjectKey{Name: mcs.SetNamespace(set)}, ns)
	if err == nil {
		if !ns.DeletionTimestamp.IsZero() {
			return fmt.Errorf("namespace %s of ManagedClusterSet %s is being deleted; its ImportedServices are written once it is gone and made anew", ns.Name, set)
		}
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("get namespace %s: %w", mcs.SetNamespace(set), err)
	}
	owner := &clusterv1beta2.ManagedClusterSet{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: set}, owner); err != nil {
		return fmt.Errorf("get ManagedClusterSet %s: %w", set, err)
	}
	ns = setNamespace(owner)
	if err := r.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s of ManagedClusterSet %s: %w", ns.Name, set, err)
	}
	return nil
}

// setNamespace is the namespace of set's ImportedServices and importer
// RoleBindings, owned by the set so that it goes with it.
func setNamespace(set *clusterv1beta2.ManagedClusterSet) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:   mcs.SetNamespace(set.Name),
		Labels: map[string]string{mcs.ClusterSetLabel: set.Name},
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: clusterv1beta2.GroupVersion.String(), Kind: "ManagedClusterSet",
			Name: set.Name, UID: set.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
		}},
	}}
}

// deleteStaleImports deletes the ImportedServices named name of sets in
// which no member exports the service any more.
func (r *MergeReconciler) deleteStaleImports(ctx context.Context, name string, bySet map[string][]Export) error {
	imports := &mcsv1alpha1.ImportedServiceList{}
	if err := r.Client.List(ctx, imports, client.MatchingFields{importNameIndex: name}); err != nil {
		return fmt.Errorf("list the ImportedServices named %s: %w", name, err)
	}
	var errs []error
	for i := range imports.Items {
		imp := &imports.Items[i]
		if _, ok := bySet[imp.Spec.ClusterSet]; (ok && imp.Namespace == mcs.SetNamespace(imp.Spec.ClusterSet)) || !imp.DeletionTimestamp.IsZero() {
			continue
		}
		err := r.Client.Delete(ctx, imp, client.Preconditions{UID: ptr.To(imp.UID)})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete ImportedService %s/%s: %w", imp.Namespace, imp.Name, err))
			continue
		}
		klog.FromContext(ctx).V(1).Info("Withdrew a service no member of its cluster set exports", "importedService", klog.KObj(imp))
	}
	return errors.Join(errs...)
}

// writeStatus writes export's status, if it changed.
func (r *MergeReconciler) writeStatus(ctx context.Context, export *mcsv1alpha1.ExportedService, m membership, verdicts map[string]Verdict) error {
	before := export.DeepCopy()
	st := &export.Status
	st.ClusterSet = m.set
	if m.set != "" {
		meta.SetStatusCondition(&st.Conditions, conflictCondition(verdicts[m.set]))
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{
			Type: mcsv1alpha1.ConditionInClusterSet, Status: metav1.ConditionTrue, Reason: reasonInClusterSet,
			Message: fmt.Sprintf("imported into ManagedClusterSet %s as ImportedService %s/%s", m.set, mcs.SetNamespace(m.set), export.Name),
		})
	} else {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{
			Type: mcsv1alpha1.ConditionConflict, Status: metav1.ConditionFalse, Reason: conflictCondition(Verdict{}).Reason,
			Message: "not in a cluster set: there is nothing to conflict with",
		})
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{
			Type: mcsv1alpha1.ConditionInClusterSet, Status: metav1.ConditionFalse, Reason: reasonNotInClusterSet,
			Message: m.why + "; the service is imported nowhere. Label the cluster into an existing " + string(clusterv1beta2.ExclusiveClusterSetLabel) + " ManagedClusterSet to share it",
		})
	}
	if equality.Semantic.DeepEqual(before.Status, export.Status) {
		return nil
	}
	err := r.Client.Status().Patch(ctx, export, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("patch status of ExportedService %s/%s: %w", export.Namespace, export.Name, err)
	}
	return nil
}
