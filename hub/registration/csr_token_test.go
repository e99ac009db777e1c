package registration

import (
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/hub/bootstraptoken"
)

// TestRetireClusterToken checks that a join token for one cluster lives
// tokenGrace past its CSR's signing, and is then deleted, while a token for
// any cluster is left alone.
func TestRetireClusterToken(t *testing.T) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	bound := bootstraptoken.ClusterSecret("abcdef", "0123456789abcdef", now.Add(24*time.Hour), "c1")
	general := bootstraptoken.Secret("ghijkl", "0123456789abcdef", now.Add(24*time.Hour))
	for _, sec := range []*corev1.Secret{bound, general} {
		sec.Data = map[string][]byte{}
		for k, v := range sec.StringData {
			sec.Data[k] = []byte(v)
		}
		sec.StringData = nil
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(bound, general).Build()
	r := &CSRReconciler{Client: c, APIReader: c}
	csr := func(id string, groups ...string) *certificatesv1.CertificateSigningRequest {
		return &certificatesv1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{Name: "c1-" + id, Labels: map[string]string{clusterv1.ClusterNameLabel: "c1"}},
			Spec:       certificatesv1.CertificateSigningRequestSpec{Username: "system:bootstrap:" + id, Groups: groups},
			Status: certificatesv1.CertificateSigningRequestStatus{
				Conditions:  []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue}},
				Certificate: []byte("signed"),
			},
		}
	}
	ctx := t.Context()

	res, err := r.retireClusterToken(ctx, csr("abcdef", bootstraptoken.Group, bootstraptoken.ClusterGroup("c1")), now)
	if err != nil || res.RequeueAfter != tokenGrace {
		t.Fatalf("first look: %v, %v; want a requeue after %s", res, err, tokenGrace)
	}
	got := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(bound), got); err != nil {
		t.Fatal(err)
	}
	if got.Annotations[bootstraptoken.UsedByAnnotation] != "c1-abcdef" || string(got.Data["expiration"]) != now.Add(tokenGrace).Format(time.RFC3339) {
		t.Errorf("used token: annotations %v, expiration %s", got.Annotations, got.Data["expiration"])
	}
	if _, err := r.retireClusterToken(ctx, csr("abcdef", bootstraptoken.Group, bootstraptoken.ClusterGroup("c1")), now.Add(tokenGrace)); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(bound), got); !apierrors.IsNotFound(err) {
		t.Errorf("the used token is still there after its grace: %v", err)
	}

	if _, err := r.retireClusterToken(ctx, csr("ghijkl", bootstraptoken.Group), now); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(general), got); err != nil || got.Annotations[bootstraptoken.UsedByAnnotation] != "" {
		t.Errorf("a token for any cluster was retired: %v, %v", got.Annotations, err)
	}
}
