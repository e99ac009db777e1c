package dev

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/flotilla-io/flotilla/cli/cmdutil/handshake"
)

// devHubAdminsBinding makes the sandbox hub's admins (group system:masters
// on the hub, flotilla:system:masters through the cluster proxy)
// cluster-admin of a dev cluster, so that flotilla kubeconfig works there
// out of the box. A real cluster's admin grants such rights themselves.
const devHubAdminsBinding = "flotilla:dev-hub-admins"

// grantHubAdmins binds cluster-admin to the hub's admins on the dev
// cluster of kubeconfig.
func grantHubAdmins(ctx context.Context, kubeconfig string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("load the dev cluster's kubeconfig %s: %w", kubeconfig, err)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	_, err = kube.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: devHubAdminsBinding, Labels: map[string]string{handshake.ManagedByLabel: handshake.ManagedByValue}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "flotilla:system:masters"}},
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("grant the hub's admins cluster-admin on the dev cluster (ClusterRoleBinding %s): %w", devHubAdminsBinding, err)
	}
	return nil
}
