package registration

import (
	"context"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/flotilla-io/flotilla/hub/bootstrap"
)

// Install creates, or updates to the current definitions, what the
// registration controllers rely on but do not create per cluster: the
// shared ClusterRoles, the admission policy (with its binding) that
// guards spec.hubAcceptsClient, and the FlowSchema that gives the agents'
// lease renewals priority. It is idempotent; the hub calls it at
// every start, on the embedded control plane and on existing clusters.
func Install(ctx context.Context, client kubernetes.Interface) error {
	for _, role := range sharedClusterRoles() {
		err := bootstrap.CreateOrUpdate(ctx, client.RbacV1().ClusterRoles(), role,
			func(got *rbacv1.ClusterRole) bool {
				same := equality.Semantic.DeepEqual(got.Rules, role.Rules)
				got.Rules = role.Rules
				return same
			})
		if err != nil {
			return fmt.Errorf("install ClusterRole %s: %w", role.Name, err)
		}
	}
	policy := acceptPolicy()
	err := bootstrap.CreateOrUpdate(ctx, client.AdmissionregistrationV1().ValidatingAdmissionPolicies(), policy,
		func(got *admissionregistrationv1.ValidatingAdmissionPolicy) bool {
			// The server fills in defaults, so this may update needlessly; an
			// unchanged object is not written again.
			same := equality.Semantic.DeepEqual(got.Spec, policy.Spec)
			got.Spec = policy.Spec
			return same
		})
	if err != nil {
		return fmt.Errorf("install ValidatingAdmissionPolicy %s: %w", policy.Name, err)
	}
	binding := acceptPolicyBinding()
	err = bootstrap.CreateOrUpdate(ctx, client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings(), binding,
		func(got *admissionregistrationv1.ValidatingAdmissionPolicyBinding) bool {
			same := equality.Semantic.DeepEqual(got.Spec, binding.Spec)
			got.Spec = binding.Spec
			return same
		})
	if err != nil {
		return fmt.Errorf("install ValidatingAdmissionPolicyBinding %s: %w", binding.Name, err)
	}
	schema := leaseFlowSchema()
	err = bootstrap.CreateOrUpdate(ctx, client.FlowcontrolV1().FlowSchemas(), schema,
		func(got *flowcontrolv1.FlowSchema) bool {
			same := equality.Semantic.DeepEqual(got.Spec, schema.Spec)
			got.Spec = schema.Spec
			return same
		})
	if err != nil {
		return fmt.Errorf("install FlowSchema %s: %w", schema.Name, err)
	}
	klog.FromContext(ctx).V(1).Info("Registration RBAC, admission policy and lease priority installed")
	return nil
}
