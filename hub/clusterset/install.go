package clusterset

import (
	"context"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	admissionv1client "k8s.io/client-go/kubernetes/typed/admissionregistration/v1"
	"k8s.io/klog/v2"

	"github.com/flotilla-io/flotilla/internal/kubeapply"
)

// Install creates, or updates to the current definitions, the admission
// policies (with their bindings) that guard set membership and set
// bindings, and the one that creates a cluster in no set in the default
// set (where the API server serves MutatingAdmissionPolicies). The hub's
// own user, as the API server knows it, is exempt. It is idempotent; the
// hub calls it at every start.
func Install(ctx context.Context, client kubernetes.Interface) error {
	hubUser, err := whoAmI(ctx, client)
	if err != nil {
		return err
	}
	adm := client.AdmissionregistrationV1()
	for _, policy := range []*admissionregistrationv1.ValidatingAdmissionPolicy{joinPolicy(hubUser), bindPolicy(hubUser)} {
		if err := kubeapply.InstallAdmissionPolicy(ctx, adm, policy, policyBinding(policy.Name)); err != nil {
			return err
		}
	}
	// Without the policy the DefaultSetReconciler labels new clusters, one
	// write later: a hub whose role predates the policy still starts.
	switch err := installDefaultSetPolicy(ctx, client, adm); {
	case apierrors.IsForbidden(err):
		klog.FromContext(ctx).Info("The hub may not install the MutatingAdmissionPolicy that creates new clusters in the default set "+
			"(its ClusterRole predates it: apply the current chart or kustomization); they are labelled by a write after their creation", "error", err.Error())
	case err != nil:
		return err
	}
	klog.FromContext(ctx).V(1).Info("Cluster set admission policies installed", "exemptUser", hubUser)
	return nil
}

// installDefaultSetPolicy installs defaultSetPolicy where the API server
// serves MutatingAdmissionPolicies.
func installDefaultSetPolicy(ctx context.Context, client kubernetes.Interface, adm admissionv1client.AdmissionregistrationV1Interface) error {
	served, err := servesMutatingPolicies(client)
	if err != nil || !served {
		if err == nil {
			klog.FromContext(ctx).Info("The API server serves no MutatingAdmissionPolicies (Kubernetes 1.36 or later): new clusters are labelled into the default set by a write after their creation")
		}
		return err
	}
	return kubeapply.InstallMutatingAdmissionPolicy(ctx, adm, defaultSetPolicy(), mutatingPolicyBinding(DefaultSetPolicyName))
}

// servesMutatingPolicies says whether the API server serves
// MutatingAdmissionPolicies in admissionregistration.k8s.io/v1 (GA, and on
// by default, from Kubernetes 1.36; a hub run against an existing cluster
// may find an older one).
func servesMutatingPolicies(client kubernetes.Interface) (bool, error) {
	gv := admissionregistrationv1.SchemeGroupVersion.String()
	list, err := client.Discovery().ServerResourcesForGroupVersion(gv)
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("discover the resources of %s: %w", gv, err)
	}
	for _, r := range list.APIResources {
		if r.Name == "mutatingadmissionpolicies" {
			return true, nil
		}
	}
	return false, nil
}

// whoAmI returns the user name the API server gives the hub's credentials.
func whoAmI(ctx context.Context, client kubernetes.Interface) (string, error) {
	review, err := client.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("ask the API server who the hub is (SelfSubjectReview): %w", err)
	}
	return review.Status.UserInfo.Username, nil
}
