package clusterset

import (
	"context"
	"fmt"
	"maps"
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/internal/kubeapply"
)

// Install creates, or updates to the current definitions, the admission
// policies (with their bindings) that guard set membership and set
// bindings. The hub's own user, as the API server knows it, is exempt. It
// is idempotent; the hub calls it at every start.
func Install(ctx context.Context, client kubernetes.Interface) error {
	hubUser, err := whoAmI(ctx, client)
	if err != nil {
		return err
	}
	adm := client.AdmissionregistrationV1()
	for _, policy := range []*admissionregistrationv1.ValidatingAdmissionPolicy{joinPolicy(hubUser), bindPolicy(hubUser)} {
		if err := kubeapply.InstallAdmissionPolicy(ctx, adm, policy); err != nil {
			return err
		}
	}
	klog.FromContext(ctx).V(1).Info("Cluster set admission policies installed", "exemptUser", hubUser)
	return nil
}

// whoAmI returns the user name the API server gives the hub's credentials.
func whoAmI(ctx context.Context, client kubernetes.Interface) (string, error) {
	review, err := client.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("ask the API server who the hub is (SelfSubjectReview): %w", err)
	}
	return review.Status.UserInfo.Username, nil
}

// InstallKeptSets creates the sets the hub keeps, "default" and "global",
// where they are missing, so that they exist once the hub says that it is
// ready: the set controller, which keeps them from then on, runs only in
// the process that leads, and creates them moments after the start. It
// leaves existing sets alone (the controller puts back a changed spec).
func InstallKeptSets(ctx context.Context, c client.Client) error {
	for _, name := range slices.Sorted(maps.Keys(keptSets)) {
		if err := c.Create(ctx, keptSets[name]()); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create ManagedClusterSet %s, which the hub keeps: %w", name, err)
		}
	}
	return nil
}
