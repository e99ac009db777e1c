package clusterset

import (
	"context"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

// The API server's part (the policy labelling a create) is proven against
// a real one by the integration specs; this is what Install does with
// what the API server answers.
func TestInstallDefaultSetPolicy(t *testing.T) {
	mutating := admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingadmissionpolicies")
	tests := []struct {
		name       string
		served     bool
		createErr  error
		wantErr    bool
		wantPolicy bool
	}{
		{name: "served: installed", served: true, wantPolicy: true},
		{name: "not served (before Kubernetes 1.36): skipped", served: false},
		{name: "forbidden (a role that predates the policy): skipped, the hub starts", served: true,
			createErr: apierrors.NewForbidden(mutating.GroupResource(), DefaultSetPolicyName, nil)},
		{name: "any other error stops the install", served: true,
			createErr: apierrors.NewInternalError(context.DeadlineExceeded), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewClientset()
			client.PrependReactor("create", "selfsubjectreviews", func(clienttesting.Action) (bool, runtime.Object, error) {
				return true, &authenticationv1.SelfSubjectReview{Status: authenticationv1.SelfSubjectReviewStatus{
					UserInfo: authenticationv1.UserInfo{Username: "system:serviceaccount:open-cluster-management-hub:flotilla-hub"}}}, nil
			})
			resources := []metav1.APIResource{{Name: "validatingadmissionpolicies"}}
			if tt.served {
				resources = append(resources, metav1.APIResource{Name: "mutatingadmissionpolicies"})
			}
			client.Discovery().(*fakediscovery.FakeDiscovery).Resources = []*metav1.APIResourceList{{
				GroupVersion: admissionregistrationv1.SchemeGroupVersion.String(), APIResources: resources}}
			if tt.createErr != nil {
				client.PrependReactor("create", "mutatingadmissionpolicies", func(clienttesting.Action) (bool, runtime.Object, error) {
					return true, nil, tt.createErr
				})
			}

			err := Install(context.Background(), client)
			if tt.wantErr {
				if !apierrors.IsInternalError(err) {
					t.Fatalf("Install: %v, want the create's error", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Install: %v", err)
			}
			for _, name := range []string{JoinPolicyName, BindPolicyName} {
				if _, err := client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Get(context.Background(), name, metav1.GetOptions{}); err != nil {
					t.Errorf("binding of %s: %v", name, err)
				}
			}
			got := has(t, client, mutating, DefaultSetPolicyName)
			bound := has(t, client, admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingadmissionpolicybindings"), DefaultSetPolicyName)
			if got != tt.wantPolicy || bound != tt.wantPolicy {
				t.Errorf("policy installed %t, bound %t; want %t", got, bound, tt.wantPolicy)
			}
		})
	}
}

func has(t *testing.T, client *fake.Clientset, gvr schema.GroupVersionResource, name string) bool {
	t.Helper()
	_, err := client.Tracker().Get(gvr, "", name)
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}
