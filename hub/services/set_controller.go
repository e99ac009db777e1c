package services

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/identity"
	"github.com/flotilla-io/flotilla/internal/mcs"
)

// SetReconciler keeps, for each exclusive ManagedClusterSet, its hub
// namespace and in it one RoleBinding per accepted member cluster to
// ImporterClusterRole, bound to the cluster's accepted agent. It removes
// the binding of a cluster that leaves the set, and the namespace of a
// set that is no longer exclusive (a deleted set's goes with it, its owner).
type SetReconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
}

// SetupWithManager registers the reconciler and its watches.
func (r *SetReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("services-clusterset").
		For(&clusterv1beta2.ManagedClusterSet{}).
		Owns(&corev1.Namespace{}).
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(r.setsOfCluster),
			builder.WithPredicates(predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
				return accessRelevant(e.ObjectOld.(*clusterv1.ManagedCluster), e.ObjectNew.(*clusterv1.ManagedCluster))
			}})).
		Watches(&rbacv1.RoleBinding{}, handler.EnqueueRequestsFromMapFunc(setOfBinding),
			builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
				return o.GetLabels()[mcs.ClusterSetLabel] != "" && o.GetNamespace() == mcs.SetNamespace(o.GetLabels()[mcs.ClusterSetLabel])
			}))).
		Complete(r)
}

// accessRelevant says whether a cluster's update changes its importer
// binding: its set, its acceptance, its accepted agent, its deletion.
func accessRelevant(old, cur *clusterv1.ManagedCluster) bool {
	return old.Labels[clusterv1.ClusterSetLabel] != cur.Labels[clusterv1.ClusterSetLabel] ||
		old.Spec.HubAcceptsClient != cur.Spec.HubAcceptsClient ||
		old.Annotations[identity.AcceptedAgentAnnotation] != cur.Annotations[identity.AcceptedAgentAnnotation] ||
		old.DeletionTimestamp.IsZero() != cur.DeletionTimestamp.IsZero()
}

// setsOfCluster are the cluster's set and every set whose namespace binds it.
func (r *SetReconciler) setsOfCluster(ctx context.Context, o client.Object) []reconcile.Request {
	sets := []string{}
	if s := o.GetLabels()[clusterv1.ClusterSetLabel]; s != "" {
		sets = append(sets, s)
	}
	bindings := &rbacv1.RoleBindingList{}
	err := r.Client.List(ctx, bindings, client.MatchingLabels{clusterv1.ClusterNameLabel: o.GetName()}, client.HasLabels{mcs.ClusterSetLabel}, client.UnsafeDisableDeepCopy)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Cannot list the importer RoleBindings of a cluster", "managedCluster", klog.KObj(o))
	}
	for _, b := range bindings.Items {
		sets = append(sets, b.Labels[mcs.ClusterSetLabel])
	}
	slices.Sort(sets)
	sets = slices.Compact(sets)
	reqs := make([]reconcile.Request, len(sets))
	for i, s := range sets {
		reqs[i] = reconcile.Request{NamespacedName: types.NamespacedName{Name: s}}
	}
	return reqs
}

func setOfBinding(_ context.Context, o client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: o.GetLabels()[mcs.ClusterSetLabel]}}}
}

// Reconcile keeps one set's namespace and importer bindings.
func (r *SetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	set := &clusterv1beta2.ManagedClusterSet{}
	err := r.Client.Get(ctx, req.NamespacedName, set)
	switch {
	case apierrors.IsNotFound(err):
		// The namespace goes with the set (its owner); the bindings with it.
		return ctrl.Result{}, nil
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("get ManagedClusterSet %s: %w", req.Name, err)
	case !exclusive(set):
		return ctrl.Result{}, r.deleteNamespace(ctx, set)
	}
	if err := ensureImporterRole(ctx, r.Client); err != nil {
		return ctrl.Result{}, err
	}
	ns, err := r.ensureNamespace(ctx, set)
	if err != nil || ns == nil {
		return ctrl.Result{}, err
	}
	clusters := &clusterv1.ManagedClusterList{}
	if err := r.Client.List(ctx, clusters, client.MatchingLabels{clusterv1.ClusterSetLabel: set.Name}); err != nil {
		return ctrl.Result{}, fmt.Errorf("list the members of ManagedClusterSet %s: %w", set.Name, err)
	}
	members := map[string]bool{}
	var errs []error
	for i := range clusters.Items {
		c := &clusters.Items[i]
		if !c.Spec.HubAcceptsClient || !c.DeletionTimestamp.IsZero() {
			continue
		}
		members[c.Name] = true
		if err := r.ensureBinding(ctx, set.Name, c); err != nil {
			errs = append(errs, err)
		}
	}
	bindings := &rbacv1.RoleBindingList{}
	if err := r.Client.List(ctx, bindings, client.InNamespace(ns.Name), client.MatchingLabels{mcs.ClusterSetLabel: set.Name}); err != nil {
		return ctrl.Result{}, fmt.Errorf("list the importer RoleBindings of ManagedClusterSet %s: %w", set.Name, err)
	}
	for i := range bindings.Items {
		b := &bindings.Items[i]
		if members[b.Labels[clusterv1.ClusterNameLabel]] || !b.DeletionTimestamp.IsZero() {
			continue
		}
		if err := r.Client.Delete(ctx, b, client.Preconditions{UID: ptr.To(b.UID)}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete RoleBinding %s/%s: %w", b.Namespace, b.Name, err))
			continue
		}
		klog.FromContext(ctx).V(1).Info("Revoked the importer access of a cluster that left the set", "roleBinding", klog.KObj(b), "managedClusterSet", set.Name)
	}
	return ctrl.Result{}, errors.Join(errs...)
}

// ensureNamespace creates or repairs set's namespace. It returns nil (and
// no error) while the namespace is being deleted: its end is watched.
func (r *SetReconciler) ensureNamespace(ctx context.Context, set *clusterv1beta2.ManagedClusterSet) (*corev1.Namespace, error) {
	want := setNamespace(set)
	got := &corev1.Namespace{}
	err := r.Client.Get(ctx, client.ObjectKey{Name: want.Name}, got)
	switch {
	case apierrors.IsNotFound(err):
		if err := r.Client.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("create namespace %s of ManagedClusterSet %s: %w", want.Name, set.Name, err)
		}
		return want, nil
	case err != nil:
		return nil, fmt.Errorf("get namespace %s: %w", want.Name, err)
	case !got.DeletionTimestamp.IsZero():
		return nil, nil
	}
	if got.Labels[mcs.ClusterSetLabel] == set.Name && metav1.IsControlledBy(got, set) {
		return got, nil
	}
	if owner := metav1.GetControllerOf(got); owner != nil && owner.UID != set.UID {
		return nil, fmt.Errorf("namespace %s, where ManagedClusterSet %s's ImportedServices go, is controlled by %s %s: delete it so that the hub can make it anew",
			got.Name, set.Name, owner.Kind, owner.Name)
	}
	before := got.DeepCopy()
	if got.Labels == nil {
		got.Labels = map[string]string{}
	}
	got.Labels[mcs.ClusterSetLabel] = set.Name
	if metav1.GetControllerOf(got) == nil {
		got.OwnerReferences = append(got.OwnerReferences, want.OwnerReferences...)
	}
	if err := r.Client.Patch(ctx, got, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return nil, fmt.Errorf("label namespace %s for ManagedClusterSet %s: %w", got.Name, set.Name, err)
	}
	return got, nil
}

// deleteNamespace deletes the namespace of a set that is no cluster set
// of services (any more), if the hub made it.
func (r *SetReconciler) deleteNamespace(ctx context.Context, set *clusterv1beta2.ManagedClusterSet) error {
	ns := &corev1.Namespace{}
	err := r.Client.Get(ctx, client.ObjectKey{Name: mcs.SetNamespace(set.Name)}, ns)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get namespace %s: %w", mcs.SetNamespace(set.Name), err)
	}
	if !ns.DeletionTimestamp.IsZero() || !metav1.IsControlledBy(ns, set) {
		return nil
	}
	if err := r.Client.Delete(ctx, ns, client.Preconditions{UID: ptr.To(ns.UID)}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete namespace %s of ManagedClusterSet %s, which is no %s set: %w", ns.Name, set.Name, clusterv1beta2.ExclusiveClusterSetLabel, err)
	}
	return nil
}

// ensureBinding creates or repairs cluster c's importer RoleBinding in set's namespace.
func (r *SetReconciler) ensureBinding(ctx context.Context, set string, c *clusterv1.ManagedCluster) error {
	want := importerBinding(set, c)
	got := &rbacv1.RoleBinding{}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(want), got)
	switch {
	case apierrors.IsNotFound(err):
		if err := r.Client.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create RoleBinding %s/%s: %w", want.Namespace, want.Name, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("get RoleBinding %s/%s: %w", want.Namespace, want.Name, err)
	case got.RoleRef != want.RoleRef:
		// The role of a binding cannot change: made anew.
		if err := r.Client.Delete(ctx, got, client.Preconditions{UID: ptr.To(got.UID)}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete RoleBinding %s/%s, which refers to %s %s: %w", got.Namespace, got.Name, got.RoleRef.Kind, got.RoleRef.Name, err)
		}
		return fmt.Errorf("RoleBinding %s/%s referred to %s %s: deleted, to be made anew", got.Namespace, got.Name, got.RoleRef.Kind, got.RoleRef.Name)
	}
	if equality.Semantic.DeepEqual(got.Subjects, want.Subjects) && hasLabels(got.Labels, want.Labels) {
		return nil
	}
	before := got.DeepCopy()
	got.Subjects = want.Subjects
	if got.Labels == nil {
		got.Labels = map[string]string{}
	}
	for k, v := range want.Labels {
		got.Labels[k] = v
	}
	if err := r.Client.Patch(ctx, got, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("update RoleBinding %s/%s: %w", got.Namespace, got.Name, err)
	}
	return nil
}

// importerBinding is cluster c's RoleBinding to ImporterClusterRole in
// set's namespace, bound as registration binds the cluster's own
// namespace (identity.AgentSubjects), and owned by the cluster.
func importerBinding(set string, c *clusterv1.ManagedCluster) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{
			Name: ImporterRoleBindingName(c.Name), Namespace: mcs.SetNamespace(set),
			Labels: map[string]string{clusterv1.ClusterNameLabel: c.Name, mcs.ClusterSetLabel: set},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: clusterv1.GroupVersion.String(), Kind: "ManagedCluster", Name: c.Name, UID: c.UID,
			}},
		},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ImporterClusterRole},
		Subjects: identity.AgentSubjects(c.Name, c.Annotations[identity.AcceptedAgentAnnotation]),
	}
}

// importerRole is ImporterClusterRole: reading ImportedServices, granted
// in a set's namespace only.
func importerRole() *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: ImporterClusterRole},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{mcsv1alpha1.GroupVersion.Group}, Resources: []string{"importedservices"}, Verbs: []string{"get", "list", "watch"},
		}},
	}
}

// ensureImporterRole puts ImporterClusterRole back if it is missing or
// changed (Install creates it at hub start).
func ensureImporterRole(ctx context.Context, c client.Client) error {
	want := importerRole()
	got := &rbacv1.ClusterRole{}
	err := c.Get(ctx, client.ObjectKeyFromObject(want), got)
	switch {
	case apierrors.IsNotFound(err):
		if err := c.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create ClusterRole %s: %w", want.Name, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("get ClusterRole %s: %w", want.Name, err)
	case equality.Semantic.DeepEqual(got.Rules, want.Rules) && got.AggregationRule == nil:
		return nil
	}
	got.Rules, got.AggregationRule = want.Rules, nil
	if err := c.Update(ctx, got); err != nil {
		return fmt.Errorf("update ClusterRole %s: %w", want.Name, err)
	}
	return nil
}
