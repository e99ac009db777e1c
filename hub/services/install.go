package services

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/flotilla-io/flotilla/internal/kubeapply"
)

// Install creates, or updates to the current definitions, what the
// services controllers rely on but do not make per set: ImporterClusterRole
// and the admission policy (with its binding) that keeps agents' exports
// labelled with their own cluster. It is idempotent; the hub calls it at
// every start.
func Install(ctx context.Context, client kubernetes.Interface) error {
	err := kubeapply.Install(ctx, client.RbacV1().ClusterRoles(), importerRole(), "ClusterRole",
		func(r *rbacv1.ClusterRole) *[]rbacv1.PolicyRule { return &r.Rules })
	if err != nil {
		return err
	}
	return kubeapply.InstallAdmissionPolicy(ctx, client.AdmissionregistrationV1(), exportPolicy())
}
