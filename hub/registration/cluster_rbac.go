package registration

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/internal/identity"
)

// ensureAccess creates or repairs the RBAC of an accepted cluster. Every
// object is controlled by the ManagedCluster, so that the garbage collector
// removes the access even if the cluster's finalizer is bypassed.
//
// The ClusterRoleBinding comes last: it lets the agent read its
// ManagedCluster, which is how the agent learns that it was accepted, and
// it then goes straight to its lease, works and policies. Bound before the
// RoleBindings of its namespace, it let agents in only to be refused
// there, each backing off before trying again.
func (r *ClusterReconciler) ensureAccess(ctx context.Context, cluster *clusterv1.ManagedCluster) error {
	// The shared roles are installed at hub start; putting them back here
	// repairs them without a restart.
	for _, role := range sharedClusterRoles() {
		if err := r.ensureClusterRole(ctx, nil, role); err != nil {
			return err
		}
	}
	if err := r.ensureClusterRole(ctx, cluster, clusterRole(cluster.Name)); err != nil {
		return err
	}
	agent := cluster.Annotations[identity.AcceptedAgentAnnotation]
	for _, want := range roleBindings(cluster.Name, agent) {
		got := &rbacv1.RoleBinding{}
		got.Name, got.Namespace = want.Name, want.Namespace
		if err := r.createOrUpdate(ctx, cluster, got, func() error {
			if got.CreationTimestamp.IsZero() {
				got.RoleRef = want.RoleRef
			} else if got.RoleRef != want.RoleRef {
				return fmt.Errorf("RoleBinding %s/%s refers to %s %s, not %s: delete it so that the hub can create it", got.Namespace, got.Name, got.RoleRef.Kind, got.RoleRef.Name, want.RoleRef.Name)
			}
			got.Labels = mergeLabels(got.Labels, want.Labels)
			got.Subjects = want.Subjects
			for _, f := range want.Finalizers {
				controllerutil.AddFinalizer(got, f)
			}
			return nil
		}); err != nil {
			return err
		}
	}
	want := clusterRoleBinding(cluster.Name, agent)
	got := &rbacv1.ClusterRoleBinding{}
	got.Name = want.Name
	return r.createOrUpdate(ctx, cluster, got, func() error {
		if got.CreationTimestamp.IsZero() {
			got.RoleRef = want.RoleRef
		} else if got.RoleRef != want.RoleRef {
			return fmt.Errorf("ClusterRoleBinding %s refers to %s %s, not %s: delete it so that the hub can create it", got.Name, got.RoleRef.Kind, got.RoleRef.Name, want.RoleRef.Name)
		}
		got.Labels = mergeLabels(got.Labels, want.Labels)
		got.Subjects = want.Subjects
		return nil
	})
}

// ensureClusterRole creates or repairs a ClusterRole; a nil owner leaves it unowned.
func (r *ClusterReconciler) ensureClusterRole(ctx context.Context, owner *clusterv1.ManagedCluster, want *rbacv1.ClusterRole) error {
	got := &rbacv1.ClusterRole{}
	got.Name = want.Name
	return r.createOrUpdate(ctx, owner, got, func() error {
		got.Labels = mergeLabels(got.Labels, want.Labels)
		got.Rules = want.Rules
		got.AggregationRule = nil
		return nil
	})
}

// createOrUpdate reads obj by name, applies mutate and the owner, and
// writes it if that changed anything.
func (r *ClusterReconciler) createOrUpdate(ctx context.Context, owner *clusterv1.ManagedCluster, obj client.Object, mutate func() error) error {
	_, err := controllerutil.CreateOrUpdate(ctx, r.Client, obj, func() error {
		if err := mutate(); err != nil {
			return err
		}
		if owner == nil {
			return nil
		}
		return controllerutil.SetControllerReference(owner, obj, r.Scheme)
	})
	if err != nil {
		return fmt.Errorf("write %T %s: %w", obj, client.ObjectKeyFromObject(obj), err)
	}
	return nil
}

// revokeAccess removes every grant of cluster c's agents: its ClusterRole
// and ClusterRoleBinding and both RoleBindings in its namespace.
func (r *ClusterReconciler) revokeAccess(ctx context.Context, c string) error {
	if err := r.revokeRegistrationAccess(ctx, c); err != nil {
		return err
	}
	return r.revokeWorkAccess(ctx, c)
}

// revokeRegistrationAccess removes everything but the agent's access to
// its ManifestWorks.
func (r *ClusterReconciler) revokeRegistrationAccess(ctx context.Context, c string) error {
	for _, obj := range []client.Object{clusterRoleBinding(c, ""), clusterRole(c), registrationRoleBinding(c, "")} {
		if err := r.deleteIfPresent(ctx, obj); err != nil {
			return err
		}
	}
	return nil
}

// revokeWorkAccess removes the RoleBinding to the work ClusterRole.
func (r *ClusterReconciler) revokeWorkAccess(ctx context.Context, c string) error {
	if err := r.releaseWorkRoleBinding(ctx, c); err != nil {
		return err
	}
	return r.deleteIfPresent(ctx, workRoleBinding(c, ""))
}

// releaseWorkRoleBinding drops the finalizer that keeps cluster c's work
// RoleBinding alive.
func (r *ClusterReconciler) releaseWorkRoleBinding(ctx context.Context, c string) error {
	rb := &rbacv1.RoleBinding{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: c, Name: WorkRoleBindingName(c)}, rb)
	if apierrors.IsNotFound(err) || (err == nil && !controllerutil.ContainsFinalizer(rb, WorkRoleBindingFinalizer)) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get RoleBinding %s/%s: %w", c, WorkRoleBindingName(c), err)
	}
	before := rb.DeepCopy()
	controllerutil.RemoveFinalizer(rb, WorkRoleBindingFinalizer)
	if err := r.Client.Patch(ctx, rb, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("release RoleBinding %s/%s: %w", c, rb.Name, err)
	}
	return nil
}

// deleteIfPresent deletes obj (named by its key) unless the cache says it
// is already gone or going.
func (r *ClusterReconciler) deleteIfPresent(ctx context.Context, obj client.Object) error {
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get %T %s: %w", obj, client.ObjectKeyFromObject(obj), err)
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		return nil
	}
	if err := r.Client.Delete(ctx, obj, client.Preconditions{UID: ptr.To(obj.GetUID())}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete %T %s: %w", obj, client.ObjectKeyFromObject(obj), err)
	}
	return nil
}

func mergeLabels(have, want map[string]string) map[string]string {
	if have == nil {
		have = map[string]string{}
	}
	for k, v := range want {
		have[k] = v
	}
	return have
}
