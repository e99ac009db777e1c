package work

import (
	"context"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

// Two hub processes that start together both find no configuration; the
// one whose create comes second reads it again and brings it in line,
// rather than failing (and exiting) on AlreadyExists.
func TestInstallWebhookRacesAnotherHub(t *testing.T) {
	theirs := WebhookConfiguration("https://127.0.0.1:9443", []byte("their CA"))
	client := fake.NewClientset(theirs)
	raced := false
	client.PrependReactor("get", "validatingwebhookconfigurations", func(clienttesting.Action) (bool, runtime.Object, error) {
		if raced {
			return false, nil, nil
		}
		raced = true
		return true, nil, apierrors.NewNotFound(admissionregistrationv1.Resource("validatingwebhookconfigurations"), theirs.Name)
	})
	if err := InstallWebhook(context.Background(), client, "https://127.0.0.1:9443", []byte("our CA")); err != nil {
		t.Fatalf("want the race absorbed, got %v", err)
	}
	got, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(context.Background(), theirs.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Webhooks[0].ClientConfig.CABundle) != "our CA" {
		t.Fatalf("configuration not brought in line: %q", got.Webhooks[0].ClientConfig.CABundle)
	}
}
