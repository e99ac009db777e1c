package registration

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// reconcileDelete releases a deleted cluster in order:
//
//  1. its RBAC, except the agent's access to its ManifestWorks;
//  2. its ManifestWorks, waiting until they are gone: the agent removes
//     their finalizers once it has deleted what they applied, which is why
//     the work RoleBinding stays until then;
//  3. the work RoleBinding, then the namespace with everything left in it,
//     waiting until the namespace is gone;
//  4. the finalizer.
//
// Each wait ends with a watch event (a ManifestWork or the namespace
// deleted), not with polling.
func (r *ClusterReconciler) reconcileDelete(ctx context.Context, s *clusterScope) (ctrl.Result, error) {
	logger := klog.FromContext(ctx)
	cluster := s.cluster
	if !controllerutil.ContainsFinalizer(cluster, ClusterFinalizer) {
		return ctrl.Result{}, nil
	}
	if err := r.revokeRegistrationAccess(ctx, cluster.Name); err != nil {
		return ctrl.Result{}, fmt.Errorf("revoke the access of deleted cluster %s: %w", cluster.Name, err)
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
