package kubeapply

import (
	"context"
	"fmt"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	admissionv1client "k8s.io/client-go/kubernetes/typed/admissionregistration/v1"
	"k8s.io/client-go/util/retry"
)

// TypedAPI is the part of a client-go typed client that CreateOrUpdate uses.
type TypedAPI[T metav1.Object] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
}

// CreateOrUpdate creates want, or brings the existing object in line with
// it: mutate copies what matters from want into got and reports whether got
// already matched (then nothing is written). Conflicts are retried, and so
// are a create that another writer beat (several hub members start and
// install the same objects at once) and a server that timed out (one busy
// with such a start).
func CreateOrUpdate[T metav1.Object](ctx context.Context, api TypedAPI[T], want T, mutate func(got T) (same bool)) error {
	return retry.OnError(applyRetry, retriable, func() error {
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

// applyRetry spaces the retries of CreateOrUpdate: about 25 s in all.
var applyRetry = wait.Backoff{Steps: 10, Duration: 50 * time.Millisecond, Factor: 2, Jitter: 0.1, Cap: 5 * time.Second}

func retriable(err error) bool {
	return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err)
}

// Install creates want, or brings the part of the existing object that
// part points into (its spec, a role's rules) in line with want's; kind
// names the object in the error. Where the server fills in defaults the
// parts may differ only by those, and the object is written again; the
// API server does not store a write that changes nothing.
func Install[T metav1.Object, P any](ctx context.Context, api TypedAPI[T], want T, kind string, part func(T) *P) error {
	err := CreateOrUpdate(ctx, api, want, func(got T) bool {
		same := equality.Semantic.DeepEqual(*part(got), *part(want))
		*part(got) = *part(want)
		return same
	})
	if err != nil {
		return fmt.Errorf("install %s %s: %w", kind, want.GetName(), err)
	}
	return nil
}

// InstallAdmissionPolicy installs a ValidatingAdmissionPolicy and the
// binding that puts it in force, each brought in line with its spec.
func InstallAdmissionPolicy(ctx context.Context, adm admissionv1client.AdmissionregistrationV1Interface, policy *admissionregistrationv1.ValidatingAdmissionPolicy) error {
	binding := DenyBinding(policy.Name)
	err := Install(ctx, adm.ValidatingAdmissionPolicies(), policy, "ValidatingAdmissionPolicy",
		func(p *admissionregistrationv1.ValidatingAdmissionPolicy) *admissionregistrationv1.ValidatingAdmissionPolicySpec {
			return &p.Spec
		})
	if err != nil {
		return err
	}
	return Install(ctx, adm.ValidatingAdmissionPolicyBindings(), binding, "ValidatingAdmissionPolicyBinding",
		func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec {
			return &b.Spec
		})
}
