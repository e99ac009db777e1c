package registration

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/internal/addon"
	"github.com/flotilla-io/flotilla/internal/identity"
)

func request(t *testing.T, cn string, orgs []string, dns ...string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn, Organization: orgs}, DNSNames: dns}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

func TestCheckRequest(t *testing.T) {
	user := addon.AgentUser("c1", "hello", "hello-agent")
	groups := addon.AgentGroups("c1", "hello")
	san := "hello.addon.open-cluster-management.io"
	kube := &addonv1alpha1.RegistrationSpec{Type: registrationKubeClient}
	custom := &addonv1alpha1.RegistrationSpec{Type: registrationCustomSigner}
	usages := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth}
	cases := []struct {
		name    string
		reg     *addonv1alpha1.RegistrationSpec
		request []byte
		usages  []certificatesv1.KeyUsage
		wantErr string
	}{
		{"the template agent's subject", kube, request(t, user, groups, san), usages, ""},
		{"with system:authenticated", kube, request(t, user, append(groups, "system:authenticated"), san), usages, ""},
		{"another cluster's user", kube, request(t, addon.AgentUser("c2", "hello", "hello-agent"), groups, san), usages, "CN"},
		{"another add-on's user", kube, request(t, addon.AgentUser("c1", "other", "other-agent"), groups, san), usages, "CN"},
		{"another cluster's group", kube, request(t, user, addon.AgentGroups("c2", "hello"), san), usages, "O"},
		{"system:masters beside the groups", kube, request(t, user, append(groups, "system:masters"), san), usages, "O"},
		{"one group only", kube, request(t, user, groups[:1], san), usages, "O"},
		{"another SAN", kube, request(t, user, groups, "evil.example.com"), usages, "subject alternative names"},
		{"server auth", kube, request(t, user, groups, san), append(usages, certificatesv1.UsageServerAuth), "usage"},
		{"a custom subject", custom, request(t, "hello-user", []string{"team-a"}, san), usages, ""},
		{"a custom signer with the add-on's own names", custom, request(t, addon.AgentUser("c1", "hello", "hello"), []string{addon.ClusterAddOnGroup("c1", "hello"), addon.AddOnGroup("hello")}), usages, ""},
		{"a custom signer with another cluster's add-on user", custom, request(t, addon.AgentUser("c2", "hello", "hello"), nil), usages, "CN"},
		{"a custom signer with a cluster agent's group", custom, request(t, "x", []string{identity.ClusterGroup("c1")}), usages, "O"},
		{"garbage", kube, []byte("not pem"), usages, "PEM"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			csr := &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{Request: tc.request, Usages: tc.usages}}
			_, err := checkRequest(csr, "c1", "hello", tc.reg)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestCheckRequester(t *testing.T) {
	cluster := func(accepted bool, agent string) *clusterv1.ManagedCluster {
		return &clusterv1.ManagedCluster{
			ObjectMeta: metav1.ObjectMeta{Name: "c1", Annotations: map[string]string{identity.AcceptedAgentAnnotation: agent}},
			Spec:       clusterv1.ManagedClusterSpec{HubAcceptsClient: accepted},
		}
	}
	csr := func(user string) *certificatesv1.CertificateSigningRequest {
		return &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{Username: user}}
	}
	cases := []struct {
		name    string
		csr     *certificatesv1.CertificateSigningRequest
		cluster *clusterv1.ManagedCluster
		wantErr string
	}{
		{"the accepted agent", csr(identity.AgentUser("c1", "a1")), cluster(true, "a1"), ""},
		{"another agent of the cluster", csr(identity.AgentUser("c1", "a2")), cluster(true, "a1"), "not the accepted agent"},
		{"no agent recorded", csr(identity.AgentUser("c1", "a1")), cluster(true, ""), "not the accepted agent"},
		{"another cluster's agent", csr(identity.AgentUser("c2", "a1")), cluster(true, "a1"), "agent of cluster"},
		{"not accepted", csr(identity.AgentUser("c1", "a1")), cluster(false, "a1"), "not accepted"},
		{"a bootstrap token", csr("system:bootstrap:abcdef"), cluster(true, "a1"), "not a cluster agent"},
		{"a hub admin", csr("kubernetes-admin"), cluster(true, "a1"), "not a cluster agent"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := checkRequester(tc.csr, tc.cluster)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestTemplateName(t *testing.T) {
	cma := &addonv1alpha1.ClusterManagementAddOn{Spec: addonv1alpha1.ClusterManagementAddOnSpec{SupportedConfigs: []addonv1alpha1.ConfigMeta{{
		ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addon.Group, Resource: addon.ConfigResourceTemplates},
		DefaultConfig:       &addonv1alpha1.ConfigReferent{Name: "hello-0.1.0"},
	}}}}
	if got := templateName(cma, nil); got != "hello-0.1.0" {
		t.Errorf("default: %q", got)
	}
	mca := &addonv1alpha1.ManagedClusterAddOn{Status: addonv1alpha1.ManagedClusterAddOnStatus{ConfigReferences: []addonv1alpha1.ConfigReference{{
		ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addon.Group, Resource: addon.ConfigResourceTemplates},
		DesiredConfig:       &addonv1alpha1.ConfigSpecHash{ConfigReferent: addonv1alpha1.ConfigReferent{Name: "hello-0.2.0"}, SpecHash: "x"},
	}}}}
	if got := templateName(cma, mca); got != "hello-0.2.0" {
		t.Errorf("per cluster: %q", got)
	}
	if got := templateName(&addonv1alpha1.ClusterManagementAddOn{}, nil); got != "" {
		t.Errorf("no template add-on: %q", got)
	}
}

func TestSignRequest(t *testing.T) {
	caKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(2 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(caKey)})
	certPEM, err := signRequest(request(t, "hello-user", []string{"team-a"}, "hello.addon.open-cluster-management.io"), caPEM, keyPEM, now)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(certPEM)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(der)
	if err := cert.CheckSignatureFrom(ca); err != nil {
		t.Errorf("not signed by the CA: %v", err)
	}
	if cert.Subject.CommonName != "hello-user" || len(cert.Subject.Organization) != 1 || cert.DNSNames[0] != "hello.addon.open-cluster-management.io" {
		t.Errorf("subject %v, SANs %v", cert.Subject, cert.DNSNames)
	}
	if !cert.NotAfter.Equal(ca.NotAfter) {
		t.Errorf("NotAfter %s, want the CA's %s (before a day)", cert.NotAfter, ca.NotAfter)
	}
	if len(cert.ExtKeyUsage) != 2 || cert.KeyUsage != x509.KeyUsageDigitalSignature|x509.KeyUsageKeyEncipherment {
		t.Errorf("usages %v %v", cert.KeyUsage, cert.ExtKeyUsage)
	}
	if _, err := signRequest(request(t, "x", nil), caPEM, keyPEM, now.Add(3*time.Hour)); err == nil {
		t.Error("an expired CA signed")
	}
}
