package bootstraptoken

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/internal/kubeapply"
)

// ClosedMessage says that the join path is closed, why, and how to open it.
const ClosedMessage = "the join path is closed: the ClusterRole " + ClusterRoleName + ", which every join token and the bootstrap ServiceAccount need, " +
	"was deleted (clusteradm delete token deletes it, with the ServiceAccount " + Namespace + "/" + ServiceAccountName + " and its binding), " +
	"so no cluster can join and the hub makes no join token; run `flotilla init` against the hub to open it again"

// JoinPathOpen says whether a cluster can join: whether the bootstrap
// ClusterRole exists. `clusteradm delete token` deletes it, which closes
// the join path until `flotilla init` (or `clusteradm init` on OCM) puts it
// back.
func JoinPathOpen(ctx context.Context, c client.Reader) (bool, error) {
	err := c.Get(ctx, client.ObjectKey{Name: ClusterRoleName}, &rbacv1.ClusterRole{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read ClusterRole %s: %w", ClusterRoleName, err)
	}
	return true, nil
}

// Install opens the join path at a hub's start (Open), unless it was
// closed: the bootstrap ClusterRole is missing while its binding to the
// token group, which `clusteradm delete token` leaves, is there. A hub
// that finds neither is new, and opens it. It is idempotent.
func Install(ctx context.Context, kube kubernetes.Interface) error {
	rbac := kube.RbacV1()
	_, roleErr := rbac.ClusterRoles().Get(ctx, ClusterRoleName, metav1.GetOptions{})
	if roleErr != nil && !apierrors.IsNotFound(roleErr) {
		return fmt.Errorf("read ClusterRole %s: %w", ClusterRoleName, roleErr)
	}
	if apierrors.IsNotFound(roleErr) {
		_, err := rbac.ClusterRoleBindings().Get(ctx, ClusterRoleName, metav1.GetOptions{})
		if err == nil {
			klog.FromContext(ctx).Info("Not opening the join path: it was closed", "reason", ClosedMessage)
			return nil
		}
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("read ClusterRoleBinding %s: %w", ClusterRoleName, err)
		}
	}
	_, err := Open(ctx, kube)
	return err
}

// Open opens the join path: it creates the namespace open-cluster-management
// and the bootstrap ServiceAccount in it when missing, and creates or puts
// back the bootstrap ClusterRole and its two bindings. It returns what it
// created. `flotilla init` calls it.
func Open(ctx context.Context, kube kubernetes.Interface) ([]string, error) {
	var created []string
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}
	if _, err := kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err == nil {
		created = append(created, "created Namespace "+Namespace)
	} else if !apierrors.IsAlreadyExists(err) {
		return created, fmt.Errorf("create namespace %s: %w", Namespace, err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: ServiceAccountName, Namespace: Namespace, Labels: managedBy()}}
	if _, err := kube.CoreV1().ServiceAccounts(Namespace).Create(ctx, sa, metav1.CreateOptions{}); err == nil {
		created = append(created, "created ServiceAccount "+Namespace+"/"+ServiceAccountName)
	} else if !apierrors.IsAlreadyExists(err) {
		return created, fmt.Errorf("create ServiceAccount %s/%s: %w", Namespace, ServiceAccountName, err)
	}
	rbac := kube.RbacV1()
	if _, err := rbac.ClusterRoles().Get(ctx, ClusterRoleName, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		created = append(created, "created ClusterRole "+ClusterRoleName)
	}
	err := kubeapply.Install(ctx, rbac.ClusterRoles(), ClusterRole(), "ClusterRole",
		func(r *rbacv1.ClusterRole) *[]rbacv1.PolicyRule { return &r.Rules })
	if err != nil {
		return created, err
	}
	for _, b := range []*rbacv1.ClusterRoleBinding{GroupBinding(), ServiceAccountBinding()} {
		if _, err := rbac.ClusterRoleBindings().Get(ctx, b.Name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			created = append(created, "created ClusterRoleBinding "+b.Name)
		}
		err := kubeapply.Install(ctx, rbac.ClusterRoleBindings(), b, "ClusterRoleBinding",
			func(b *rbacv1.ClusterRoleBinding) *[]rbacv1.Subject { return &b.Subjects })
		if err != nil {
			return created, err
		}
	}
	return created, nil
}
