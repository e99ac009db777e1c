package registration

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
)

// reconcileAcceptance grants an accepted cluster's agent its namespace and
// RBAC, or takes the RBAC away again from a denied one, and sets
// HubAcceptedManagedCluster accordingly.
func (r *ClusterReconciler) reconcileAcceptance(ctx context.Context, s *clusterScope) (ctrl.Result, error) {
	cluster := s.cluster
	current := meta.FindStatusCondition(cluster.Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted)
	wasAccepted := current != nil && current.Status == metav1.ConditionTrue

	if !cluster.Spec.HubAcceptsClient {
		if err := r.revokeAccess(ctx, cluster.Name); err != nil {
			return ctrl.Result{}, fmt.Errorf("revoke the access of cluster %s: %w", cluster.Name, err)
		}
		s.namespaceReady = false
		if cond := acceptedCondition(false, current); cond != nil {
			meta.SetStatusCondition(&cluster.Status.Conditions, *cond)
			if wasAccepted {
				s.events.Add(corev1.EventTypeNormal, reasonClusterDenied, "Deny", "Cluster %s was denied: its agent's access was removed", cluster.Name)
			}
		}
		return ctrl.Result{}, nil
	}

	if problems := validation.IsDNS1123Label(cluster.Name); len(problems) > 0 {
		meta.SetStatusCondition(&cluster.Status.Conditions, invalidNameCondition(problems, cluster.Generation))
		return ctrl.Result{}, reconcile.TerminalError(fmt.Errorf("ManagedCluster %s cannot name a namespace: %v", cluster.Name, problems))
	}
	ready, err := r.ensureNamespace(ctx, cluster.Name)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("ensure the namespace of cluster %s: %w", cluster.Name, err)
	}
	if !ready {
		// The old namespace is still being deleted; its deletion wakes us.
		klog.FromContext(ctx).Info("Waiting for the cluster namespace to be deleted before creating it again", "namespace", cluster.Name)
		return ctrl.Result{}, nil
	}
	s.namespaceReady = true
	if err := r.ensureAccess(ctx, cluster); err != nil {
		return ctrl.Result{}, fmt.Errorf("grant cluster %s its access: %w", cluster.Name, err)
	}
	meta.SetStatusCondition(&cluster.Status.Conditions, *acceptedCondition(true, current))
	if !wasAccepted {
		s.events.Add(corev1.EventTypeNormal, reasonClusterAccepted, "Accept", "Cluster %s was accepted: namespace and agent RBAC are in place", cluster.Name)
	}
	return ctrl.Result{}, nil
}

// ensureNamespace creates the cluster namespace, or labels an existing one.
// It reports false while a namespace of that name is being deleted.
func (r *ClusterReconciler) ensureNamespace(ctx context.Context, name string) (bool, error) {
	ns := &corev1.Namespace{}
	err := r.Client.Get(ctx, client.ObjectKey{Name: name}, ns)
	switch {
	case apierrors.IsNotFound(err):
		ns = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: clusterLabels(name)}}
		if err := r.Client.Create(ctx, ns); err != nil {
			return false, fmt.Errorf("create namespace %s: %w", name, err)
		}
		return true, nil
	case err != nil:
		return false, err
	case !ns.DeletionTimestamp.IsZero():
		return false, nil
	case ns.Labels[clusterv1.ClusterNameLabel] != name:
		before := ns.DeepCopy()
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		ns.Labels[clusterv1.ClusterNameLabel] = name
		if err := r.Client.Patch(ctx, ns, client.MergeFrom(before)); err != nil {
			return false, fmt.Errorf("label namespace %s: %w", name, err)
		}
	}
	return true, nil
}
