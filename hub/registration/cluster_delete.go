package registration

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// reconcileDelete releases a deleted cluster in order:
//
//  1. its RBAC, except the agent's access to its ManifestWorks;
//  2. its ManagedClusterAddOns, waiting until they are gone: an add-on's
//     pre-delete hook runs through a ManifestWork, so its works must stay
//     until the add-on released them;
//  3. its ManifestWorks, waiting until they are gone: the agent removes
//     their finalizers once it has deleted what they applied, which is why
//     the work RoleBinding stays until then;
//  4. the work RoleBinding, then the namespace with everything left in it,
//     waiting until the namespace is gone;
//  5. the finalizer.
//
// Each wait ends with a watch event (a ManagedClusterAddOn, a ManifestWork
// or the namespace deleted), not with polling.
func (r *ClusterReconciler) reconcileDelete(ctx context.Context, s *clusterScope) (ctrl.Result, error) {
	logger := klog.FromContext(ctx)
	cluster := s.cluster
	if !controllerutil.ContainsFinalizer(cluster, ClusterFinalizer) {
		return ctrl.Result{}, nil
	}
	if err := r.revokeRegistrationAccess(ctx, cluster.Name); err != nil {
		return ctrl.Result{}, fmt.Errorf("revoke the access of deleted cluster %s: %w", cluster.Name, err)
	}

	if waiting, err := r.deleteAll(ctx, cluster.Name, addonv1alpha1.GroupVersion.WithKind("ManagedClusterAddOnList")); err != nil || waiting {
		return ctrl.Result{}, err
	}

	works := &metav1.PartialObjectMetadataList{}
	works.SetGroupVersionKind(workv1.GroupVersion.WithKind("ManifestWorkList"))
	if err := r.Client.List(ctx, works, client.InNamespace(cluster.Name)); err != nil {
		return ctrl.Result{}, fmt.Errorf("list the ManifestWorks of deleted cluster %s: %w", cluster.Name, err)
	}
	if len(works.Items) > 0 {
		for i := range works.Items {
			work := &works.Items[i]
			if !work.DeletionTimestamp.IsZero() {
				continue
			}
			if err := r.Client.Delete(ctx, work); err != nil && !apierrors.IsNotFound(err) {
				return ctrl.Result{}, fmt.Errorf("delete ManifestWork %s: %w", klog.KObj(work), err)
			}
		}
		logger.Info("Waiting for the ManifestWorks of the deleted cluster to be removed", "count", len(works.Items))
		return ctrl.Result{}, nil
	}

	if err := r.revokeWorkAccess(ctx, cluster.Name); err != nil {
		return ctrl.Result{}, fmt.Errorf("revoke the work access of deleted cluster %s: %w", cluster.Name, err)
	}
	ns := &corev1.Namespace{}
	err := r.Client.Get(ctx, client.ObjectKey{Name: cluster.Name}, ns)
	switch {
	case err == nil && ns.Labels[clusterv1.ClusterNameLabel] != cluster.Name:
		// Not made (or labelled) by the hub for this cluster: not ours to delete.
	case err == nil:
		if ns.DeletionTimestamp.IsZero() {
			if err := r.Client.Delete(ctx, ns); err != nil && !apierrors.IsNotFound(err) {
				return ctrl.Result{}, fmt.Errorf("delete namespace %s: %w", ns.Name, err)
			}
		}
		logger.Info("Waiting for the namespace of the deleted cluster to be removed", "namespace", ns.Name)
		return ctrl.Result{}, nil
	case !apierrors.IsNotFound(err):
		return ctrl.Result{}, fmt.Errorf("get namespace %s: %w", cluster.Name, err)
	}

	controllerutil.RemoveFinalizer(cluster, ClusterFinalizer)
	return ctrl.Result{}, nil
}

// deleteAll deletes the objects of a list kind in a deleted cluster's
// namespace, and says whether some still exist (finalizers hold them).
func (r *ClusterReconciler) deleteAll(ctx context.Context, cluster string, listKind schema.GroupVersionKind) (waiting bool, err error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(listKind)
	if err := r.Client.List(ctx, list, client.InNamespace(cluster)); err != nil {
		return false, fmt.Errorf("list the %s of deleted cluster %s: %w", listKind.Kind, cluster, err)
	}
	for i := range list.Items {
		obj := &list.Items[i]
		if !obj.DeletionTimestamp.IsZero() {
			continue
		}
		if err := r.Client.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("delete %s %s: %w", strings.TrimSuffix(listKind.Kind, "List"), klog.KObj(obj), err)
		}
	}
	if len(list.Items) > 0 {
		klog.FromContext(ctx).Info("Waiting for objects of the deleted cluster to be removed", "kind", strings.TrimSuffix(listKind.Kind, "List"), "count", len(list.Items))
	}
	return len(list.Items) > 0, nil
}
