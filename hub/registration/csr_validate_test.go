package registration

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/internal/identity"
)

func TestParseRenewal(t *testing.T) {
	agentOrgs := []string{identity.ClusterGroup("c1"), identity.ManagedClustersGroup}
	tests := []struct {
		name    string
		mutate  func(csr *certificatesv1.CertificateSigningRequest)
		wantErr string
	}{
		{name: "an agent renewing its own certificate"},
		{name: "the groups in either order", mutate: func(csr *certificatesv1.CertificateSigningRequest) {
			csr.Spec.Request = request(t, identity.AgentUser("c1", "agent1"), []string{identity.ManagedClustersGroup, identity.ClusterGroup("c1")})
		}},
		{name: "another signer", wantErr: "signer", mutate: func(csr *certificatesv1.CertificateSigningRequest) {
			csr.Spec.SignerName = certificatesv1.KubeletServingSignerName
		}},
		{name: "no cluster label", wantErr: "label", mutate: func(csr *certificatesv1.CertificateSigningRequest) {
			csr.Labels = nil
		}},
		{name: "a bootstrap requester", wantErr: "not a cluster agent", mutate: func(csr *certificatesv1.CertificateSigningRequest) {
			csr.Spec.Username = "system:bootstrap:abcdef"
		}},
		{name: "a requester without agent id", wantErr: "not a cluster agent", mutate: func(csr *certificatesv1.CertificateSigningRequest) {
			csr.Spec.Username = identity.Prefix + "c1"
		}},
		{name: "a requester with too many parts", wantErr: "not a cluster agent", mutate: func(csr *certificatesv1.CertificateSigningRequest) {
			csr.Spec.Username = identity.AgentUser("c1", "agent1") + ":x"
		}},
		{name: "an agent of another cluster than the label", wantErr: "labelled", mutate: func(csr *certificatesv1.CertificateSigningRequest) {
			csr.Labels[clusterv1.ClusterNameLabel] = "c2"
		}},
		{name: "a request for another user", wantErr: "not the requester", mutate: func(csr *certificatesv1.CertificateSigningRequest) {
			csr.Spec.Request = request(t, identity.AgentUser("c1", "agent2"), agentOrgs)
		}},
		{name: "a request for another cluster's groups", wantErr: "not exactly", mutate: func(csr *certificatesv1.CertificateSigningRequest) {
			csr.Spec.Request = request(t, identity.AgentUser("c1", "agent1"), []string{identity.ClusterGroup("c2"), identity.ManagedClustersGroup})
		}},
		{name: "a request for an extra group", wantErr: "not exactly", mutate: func(csr *certificatesv1.CertificateSigningRequest) {
			csr.Spec.Request = request(t, identity.AgentUser("c1", "agent1"), append(agentOrgs, "system:masters"))
		}},
		{name: "a request missing the common group", wantErr: "not exactly", mutate: func(csr *certificatesv1.CertificateSigningRequest) {
			csr.Spec.Request = request(t, identity.AgentUser("c1", "agent1"), []string{identity.ClusterGroup("c1")})
		}},
		{name: "a server certificate", wantErr: "usage", mutate: func(csr *certificatesv1.CertificateSigningRequest) {
			csr.Spec.Usages = append(csr.Spec.Usages, certificatesv1.UsageServerAuth)
		}},
		{name: "no client auth", wantErr: "does not ask for client auth", mutate: func(csr *certificatesv1.CertificateSigningRequest) {
			csr.Spec.Usages = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature}
		}},
		{name: "not PEM", wantErr: "PEM", mutate: func(csr *certificatesv1.CertificateSigningRequest) {
			csr.Spec.Request = []byte("garbage")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			csr := renewalCSR(t, "c1", "agent1")
			if tt.mutate != nil {
				tt.mutate(csr)
			}
			got, err := parseRenewal(csr)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.wantErr == "" && got != (renewal{cluster: "c1", agent: "agent1"}):
				t.Fatalf("got %+v", got)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error %v, want one about %q", err, tt.wantErr)
			}
		})
	}
}

func TestParseRenewalRejectsSANs(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject:  pkix.Name{CommonName: identity.AgentUser("c1", "agent1"), Organization: []string{identity.ClusterGroup("c1"), identity.ManagedClustersGroup}},
		DNSNames: []string{"example.com"},
	}, key)
	if err != nil {
		t.Fatal(err)
	}
	csr := renewalCSR(t, "c1", "agent1")
	csr.Spec.Request = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
	if _, err := parseRenewal(csr); err == nil || !strings.Contains(err.Error(), "alternative names") {
		t.Fatalf("error %v, want one about subject alternative names", err)
	}
}

func TestPending(t *testing.T) {
	tests := []struct {
		name       string
		conditions []certificatesv1.CertificateSigningRequestCondition
		cert       []byte
		want       bool
	}{
		{name: "new", want: true},
		{name: "approved", conditions: []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue}}},
		{name: "denied", conditions: []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue}}},
		{name: "failed", conditions: []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateFailed, Status: corev1.ConditionTrue}}},
		{name: "issued", cert: []byte("x")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			csr := &certificatesv1.CertificateSigningRequest{Status: certificatesv1.CertificateSigningRequestStatus{Conditions: tt.conditions, Certificate: tt.cert}}
			if got := pending(csr); got != tt.want {
				t.Errorf("pending = %v, want %v", got, tt.want)
			}
		})
	}
}

// renewalCSR is a renewal CSR as agent a of cluster c sends it with its certificate.
func renewalCSR(t *testing.T, c, a string) *certificatesv1.CertificateSigningRequest {
	return &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: c + "-x", Labels: map[string]string{clusterv1.ClusterNameLabel: c}},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    request(t, identity.AgentUser(c, a), []string{identity.ClusterGroup(c), identity.ManagedClustersGroup}),
			SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth},
			Username:   identity.AgentUser(c, a),
			Groups:     []string{identity.ClusterGroup(c), identity.ManagedClustersGroup, "system:authenticated"},
		},
	}
}

func request(t *testing.T, cn string, orgs []string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn, Organization: orgs}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}
