package bootstraptoken

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/flotilla-io/flotilla/internal/kubeapply"
)

// Install creates the namespace open-cluster-management and the bootstrap
// ServiceAccount in it when missing, and creates or puts back the bootstrap
// ClusterRole and its two bindings. It is idempotent; the hub calls it at
// every start.
func Install(ctx context.Context, client kubernetes.Interface) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", Namespace, err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: ServiceAccountName, Namespace: Namespace, Labels: managedBy()}}
	if _, err := client.CoreV1().ServiceAccounts(Namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create ServiceAccount %s/%s: %w", Namespace, ServiceAccountName, err)
	}
	rbac := client.RbacV1()
	err := kubeapply.Install(ctx, rbac.ClusterRoles(), ClusterRole(), "ClusterRole",
		func(r *rbacv1.ClusterRole) *[]rbacv1.PolicyRule { return &r.Rules })
	if err != nil {
		return err
	}
	for _, b := range []*rbacv1.ClusterRoleBinding{GroupBinding(), ServiceAccountBinding()} {
		err := kubeapply.Install(ctx, rbac.ClusterRoleBindings(), b, "ClusterRoleBinding",
			func(b *rbacv1.ClusterRoleBinding) *[]rbacv1.Subject { return &b.Subjects })
		if err != nil {
			return err
		}
	}
	return nil
}
