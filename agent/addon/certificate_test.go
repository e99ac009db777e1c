package addon

import (
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/keyutil"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/addon"
)

func TestRegistrations(t *testing.T) {
	mca := &addonv1alpha1.ManagedClusterAddOn{
		ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "c1"},
		Spec:       addonv1alpha1.ManagedClusterAddOnSpec{InstallNamespace: "spec-ns"},
		Status: addonv1alpha1.ManagedClusterAddOnStatus{Registrations: []addonv1alpha1.RegistrationConfig{
			{SignerName: addon.KubeAPIServerClientSigner},
			{SignerName: "example.com/signer", Subject: addonv1alpha1.Subject{User: "u", OrganizationUnits: []string{"ou"}}},
		}},
	}
	regs := registrations("c1", mca)
	if len(regs) != 2 {
		t.Fatalf("%d registrations", len(regs))
	}
	if regs[0].secret.String() != "spec-ns/hello-hub-kubeconfig" || regs[1].secret.String() != "spec-ns/hello-example.com-signer-client-cert" {
		t.Errorf("secrets %s, %s", regs[0].secret, regs[1].secret)
	}
	if regs[0].subject.User != addon.AgentUser("c1", "hello", "hello") || len(regs[0].subject.Groups) != 1 {
		t.Errorf("default subject %+v", regs[0].subject)
	}
	if regs[1].subject.User != "u" || regs[1].subject.OrganizationUnits[0] != "ou" {
		t.Errorf("given subject %+v", regs[1].subject)
	}
	mca.Status.Namespace = "status-ns"
	moved := registrations("c1", mca)
	if moved[0].secret.Namespace != "status-ns" || moved[0].hash == regs[0].hash {
		t.Errorf("status.namespace rules, and changes the hash: %+v", moved[0])
	}
}

// issue signs a certificate for keyPEM's key and subject, valid from notBefore for life.
func issue(t *testing.T, keyPEM []byte, s addonv1alpha1.Subject, notBefore time.Time, life time.Duration) []byte {
	t.Helper()
	key, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), NotBefore: notBefore, NotAfter: notBefore.Add(life),
		Subject: pkix.Name{CommonName: s.User, Organization: s.Groups, OrganizationalUnit: s.OrganizationUnits}}
	signer := key.(crypto.Signer)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, signer.Public(), signer)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func TestSecretProblem(t *testing.T) {
	reg := &registration{addon: "hello", signer: addon.KubeAPIServerClientSigner,
		subject: addonv1alpha1.Subject{User: addon.AgentUser("c1", "hello", "hello-agent"), Groups: addon.AgentGroups("c1", "hello")}}
	kc, err := kubeconfig(&clientcmdapi.Cluster{Server: "https://hub:6443", CertificateAuthorityData: []byte("ca")})
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, _ := keyutil.MakeEllipticPrivateKeyPEM()
	now := time.Now()
	secret := func(cert []byte, kubeconfig []byte) *corev1.Secret {
		return &corev1.Secret{Data: map[string][]byte{keyCert: cert, keyKey: keyPEM, keyClusterName: []byte("c1"), keyKubeconfig: kubeconfig}}
	}
	fresh := issue(t, keyPEM, reg.subject, now.Add(-time.Minute), time.Hour)
	old := issue(t, keyPEM, reg.subject, now.Add(-50*time.Minute), time.Hour)
	other := issue(t, keyPEM, addonv1alpha1.Subject{User: "someone"}, now.Add(-time.Minute), time.Hour)
	cases := []struct {
		name   string
		secret *corev1.Secret
		want   string
	}{
		{"valid", secret(fresh, kc), ""},
		{"missing", nil, "no Secret"},
		{"another subject", secret(other, kc), "subject"},
		{"the kubeconfig changed", secret(fresh, []byte("old")), "kubeconfig"},
		{"less than a fifth of its life left", secret(old, kc), "expires"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			why, deadline := secretProblem(tc.secret, reg, "c1", kc, 0, now)
			switch {
			case tc.want == "" && why != "":
				t.Fatalf("unexpected problem %q", why)
			case tc.want == "" && (deadline.Before(now.Add(44*time.Minute)) || deadline.After(now.Add(47*time.Minute))):
				t.Fatalf("deadline %s after now, want 44-47 min (20-25 %% of an hour left)", deadline.Sub(now))
			case tc.want != "" && !strings.Contains(why, tc.want):
				t.Fatalf("problem %q, want one containing %q", why, tc.want)
			}
		})
	}
	if why, _ := secretProblem(secret(fresh, kc), reg, "c1", kc, 59*time.Minute, now); why == "" {
		t.Error("renew-before ignored")
	}
}
