package registration

import (
	"context"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
)

// Install creates, or updates to the current definitions, what the
// registration controllers rely on but do not create per cluster: the
// shared ClusterRoles and the admission policy (with its binding) that
// guards spec.hubAcceptsClient. It is idempotent; the hub calls it at
// every start, on the embedded control plane and on existing clusters.
func Install(ctx context.Context, client kubernetes.Interface) error {
	for _, role := range sharedClusterRoles() {
		err := createOrUpdate(ctx, client.RbacV1().ClusterRoles(), role,
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
	err := createOrUpdate(ctx, client.AdmissionregistrationV1().ValidatingAdmissionPolicies(), policy,
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
	err = createOrUpdate(ctx, client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings(), binding,
		func(got *admissionregistrationv1.ValidatingAdmissionPolicyBinding) bool {
			same := equality.Semantic.DeepEqual(got.Spec, binding.Spec)
			got.Spec = binding.Spec
			return same
		})
	if err != nil {
		return fmt.Errorf("install ValidatingAdmissionPolicyBinding %s: %w", binding.Name, err)
	}
	klog.FromContext(ctx).V(1).Info("Registration RBAC and admission policy installed")
	return nil
}

// typedAPI is the part of a client-go typed client that createOrUpdate uses.
type typedAPI[T metav1.Object] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
}

// createOrUpdate creates want, or brings the existing object in line with
// it: mutate copies what matters from want and reports whether it already
// matched.
func createOrUpdate[T metav1.Object](ctx context.Context, api typedAPI[T], want T, mutate func(got T) (same bool)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		got, err := api.Get(ctx, want.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = api.Create(ctx, want, metav1.CreateOptions{})
			return err
		}
		if err != nil || mutate(got) {
			return err
		}
		_, err = api.Update(ctx, got, metav1.UpdateOptions{})
		return err
	})
}
