package handshake

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

func csrPEM(t *testing.T, tmpl *x509.CertificateRequest) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

// agentCSR is a CSR as the contract says an agent of cluster makes it.
func agentCSR(t *testing.T, label, subjectCluster string) *certificatesv1.CertificateSigningRequest {
	return &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: label + "-x", Labels: map[string]string{clusterv1.ClusterNameLabel: label}},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request: csrPEM(t, &x509.CertificateRequest{Subject: pkix.Name{
				CommonName:   "system:open-cluster-management:" + subjectCluster + ":agent1",
				Organization: []string{"system:open-cluster-management:" + subjectCluster, identity.ManagedClustersGroup},
			}}),
			SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth},
			Username:   "system:bootstrap:abcdef",
			Groups:     []string{"system:bootstrappers", BootstrapGroup, "system:authenticated"},
		},
	}
}

func TestCheckCSR(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*certificatesv1.CertificateSigningRequest)
		// wantErr is a part of the refusal; empty means approvable.
		wantErr string
	}{
		{name: "an agent's CSR", modify: func(*certificatesv1.CertificateSigningRequest) {}},
		{name: "the bootstrap service account", modify: func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Username, c.Spec.Groups = bootstrapServiceAccount, []string{"system:serviceaccounts"}
		}},
		{name: "OCM's agent-registration-bootstrap service account, which the hub serves", modify: func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Username, c.Spec.Groups = "system:serviceaccount:open-cluster-management:agent-registration-bootstrap", []string{"system:serviceaccounts"}
		}},
		{name: "another service account", modify: func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Username, c.Spec.Groups = "system:serviceaccount:open-cluster-management:other", []string{"system:serviceaccounts"}
		}, wantErr: "not a join identity"},
		{name: "only the cluster group (the contract asks for both)", modify: func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Request = csrPEM(t, &x509.CertificateRequest{Subject: pkix.Name{
				CommonName: "system:open-cluster-management:c1:a", Organization: []string{"system:open-cluster-management:c1"},
			}})
		}, wantErr: "not exactly the agent groups"},
		{name: "labelled for another cluster", modify: func(c *certificatesv1.CertificateSigningRequest) {
			c.Labels[clusterv1.ClusterNameLabel] = "c2"
		}, wantErr: "labelled"},
		{name: "another signer", modify: func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.SignerName = certificatesv1.KubeletServingSignerName
		}, wantErr: "signer"},
		{name: "an administrator's request", modify: func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Username, c.Spec.Groups = "kubernetes-admin", []string{"system:masters"}
		}, wantErr: "not a join identity"},
		{name: "a bootstrap token of another group (e.g. kubeadm nodes)", modify: func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Groups = []string{"system:bootstrappers", "system:bootstrappers:kubeadm:default-node-token"}
		}, wantErr: "not a join identity"},
		{name: "the cluster's own agent renewing", modify: func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Username = "system:open-cluster-management:c1:agent1"
			c.Spec.Groups = []string{"system:open-cluster-management:c1"}
		}, wantErr: "not a join identity"},
		{name: "server auth usage", modify: func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Usages = append(c.Spec.Usages, certificatesv1.UsageServerAuth)
		}, wantErr: "server auth"},
		{name: "no client auth usage", modify: func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Usages = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature}
		}, wantErr: "client auth"},
		{name: "subject naming another cluster", modify: func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Request = agentCSR(t, "c1", "c2").Spec.Request
		}, wantErr: "does not name cluster c1"},
		{name: "CN of a cluster whose name starts alike", modify: func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Request = csrPEM(t, &x509.CertificateRequest{Subject: pkix.Name{
				CommonName: "system:open-cluster-management:c10:a", Organization: []string{"system:open-cluster-management:c1"},
			}})
		}, wantErr: "does not name cluster c1"},
		{name: "CN without agent id", modify: func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Request = csrPEM(t, &x509.CertificateRequest{Subject: pkix.Name{
				CommonName: "system:open-cluster-management:c1:", Organization: []string{"system:open-cluster-management:c1"},
			}})
		}, wantErr: "does not name cluster c1"},
		{name: "O without the cluster group", modify: func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Request = csrPEM(t, &x509.CertificateRequest{Subject: pkix.Name{
				CommonName: "system:open-cluster-management:c1:a", Organization: []string{identity.ManagedClustersGroup},
			}})
		}, wantErr: "not exactly the agent groups"},
		{name: "O asking for system:masters", modify: func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Request = csrPEM(t, &x509.CertificateRequest{Subject: pkix.Name{
				CommonName: "system:open-cluster-management:c1:a", Organization: []string{"system:open-cluster-management:c1", "system:masters"},
			}})
		}, wantErr: "system:masters"},
		{name: "subject alternative names", modify: func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Request = csrPEM(t, &x509.CertificateRequest{DNSNames: []string{"kubernetes"}, Subject: pkix.Name{
				CommonName: "system:open-cluster-management:c1:a", Organization: identity.AgentGroups("c1"),
			}})
		}, wantErr: "alternative names"},
		{name: "garbage request", modify: func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Request = []byte("not pem")
		}, wantErr: "not a PEM"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			csr := agentCSR(t, "c1", "c1")
			tt.modify(csr)
			err := checkCSR(csr, "c1")
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.wantErr != "" && err == nil:
				t.Fatalf("approved, want a refusal mentioning %q", tt.wantErr)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Fatalf("refusal %q does not mention %q", err, tt.wantErr)
			}
		})
	}
}

func TestCSRState(t *testing.T) {
	cond := func(typ certificatesv1.RequestConditionType, s corev1.ConditionStatus) certificatesv1.CertificateSigningRequestCondition {
		return certificatesv1.CertificateSigningRequestCondition{Type: typ, Status: s}
	}
	tests := []struct {
		conds []certificatesv1.CertificateSigningRequestCondition
		want  string
	}{
		{nil, "pending"},
		{[]certificatesv1.CertificateSigningRequestCondition{cond(certificatesv1.CertificateApproved, corev1.ConditionTrue)}, "approved"},
		{[]certificatesv1.CertificateSigningRequestCondition{cond(certificatesv1.CertificateApproved, "")}, "approved"},
		{[]certificatesv1.CertificateSigningRequestCondition{cond(certificatesv1.CertificateDenied, corev1.ConditionTrue)}, "denied"},
		{[]certificatesv1.CertificateSigningRequestCondition{cond(certificatesv1.CertificateFailed, corev1.ConditionTrue)}, "failed"},
		{[]certificatesv1.CertificateSigningRequestCondition{cond(certificatesv1.CertificateApproved, corev1.ConditionFalse)}, "pending"},
	}
	for _, tt := range tests {
		csr := &certificatesv1.CertificateSigningRequest{Status: certificatesv1.CertificateSigningRequestStatus{Conditions: tt.conds}}
		if got := csrState(csr); got != tt.want {
			t.Errorf("csrState(%v) = %s, want %s", tt.conds, got, tt.want)
		}
	}
}
