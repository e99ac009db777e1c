package registration

import (
	"context"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/flotilla-io/flotilla/internal/kubeapply"
)

// Install creates, or updates to the current definitions, what the
// registration controllers rely on but do not create per cluster: the
// shared ClusterRoles, the admission policies (with their bindings) that
// guard spec.hubAcceptsClient and keep cluster agents to their own status,
// CSRs and ManifestWork finalizers, and the FlowSchema that gives the agents'
// lease renewals priority. It is idempotent; the hub calls it at
// every start, on the embedded control plane and on existing clusters.
func Install(ctx context.Context, client kubernetes.Interface) error {
	for _, role := range sharedClusterRoles() {
		err := kubeapply.Install(ctx, client.RbacV1().ClusterRoles(), role, "ClusterRole",
			func(r *rbacv1.ClusterRole) *[]rbacv1.PolicyRule { return &r.Rules })
		if err != nil {
			return err
		}
	}
	adm := client.AdmissionregistrationV1()
	for _, policy := range []*admissionregistrationv1.ValidatingAdmissionPolicy{acceptPolicy(), agentClusterPolicy(), agentCSRPolicy(), agentWorkPolicy(), tokenClusterPolicy()} {
		if err := kubeapply.InstallAdmissionPolicy(ctx, adm, policy); err != nil {
			return err
		}
	}
	err := kubeapply.Install(ctx, client.FlowcontrolV1().FlowSchemas(), leaseFlowSchema(), "FlowSchema",
		func(f *flowcontrolv1.FlowSchema) *flowcontrolv1.FlowSchemaSpec { return &f.Spec })
	if err != nil {
		return err
	}
	klog.FromContext(ctx).V(1).Info("Registration RBAC, admission policy and lease priority installed")
	return nil
}
