package registration

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/keyutil"

	"github.com/flotilla-io/flotilla/internal/identity"
)

func TestNewCSRFollowsTheContract(t *testing.T) {
	g := NewWithT(t)
	keyPEM, csr, err := newCSR("edge-1", "a1", 20*time.Minute)
	g.Expect(err).NotTo(HaveOccurred())

	g.Expect(csr.GenerateName).To(Equal("edge-1-"))
	g.Expect(csr.Name).To(BeEmpty())
	g.Expect(csr.Labels).To(Equal(map[string]string{"open-cluster-management.io/cluster-name": "edge-1"}))
	g.Expect(csr.Spec.SignerName).To(Equal("kubernetes.io/kube-apiserver-client"))
	g.Expect(csr.Spec.Usages).To(ConsistOf(certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth))
	g.Expect(csr.Spec.ExpirationSeconds).To(HaveValue(BeEquivalentTo(1200)))

	req, err := identity.ParseCertificateRequest(csr.Spec.Request)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(req.CheckSignature()).To(Succeed())
	g.Expect(req.Subject.CommonName).To(Equal("system:open-cluster-management:edge-1:a1"))
	g.Expect(req.Subject.Organization).To(ConsistOf("system:open-cluster-management:edge-1", "system:open-cluster-management:managed-clusters"))

	key, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(req.PublicKey).To(Equal(key.(*ecdsa.PrivateKey).Public()), "the request is for the key kept on the spoke")
}

func TestNewCSRLeavesExpirationToTheSigner(t *testing.T) {
	g := NewWithT(t)
	_, csr, err := newCSR("edge-1", "a1", 0)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(csr.Spec.ExpirationSeconds).To(BeNil())
}

func TestPendingOwnCountsOnlyUndecidedCSRsOfThisAgent(t *testing.T) {
	g := NewWithT(t)
	csr := func(cluster, agent string, conds ...certificatesv1.RequestConditionType) certificatesv1.CertificateSigningRequest {
		_, c, err := newCSR(cluster, agent, 0)
		g.Expect(err).NotTo(HaveOccurred())
		for _, t := range conds {
			c.Status.Conditions = append(c.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: t, Status: corev1.ConditionTrue})
		}
		return *c
	}
	foreignLabel := csr("edge-1", "a1")
	foreignLabel.Labels["open-cluster-management.io/cluster-name"] = "edge-2"
	csrs := []certificatesv1.CertificateSigningRequest{
		csr("edge-1", "a1"),
		csr("edge-1", "a1"),
		csr("edge-1", "a1", certificatesv1.CertificateApproved),
		csr("edge-1", "a1", certificatesv1.CertificateDenied),
		csr("edge-1", "a1", certificatesv1.CertificateFailed),
		csr("edge-1", "other-agent"),
		csr("edge-2", "a1"),
		foreignLabel,
	}
	g.Expect(pendingOwn(csrs, "edge-1", "a1")).To(Equal(2))
}

func TestCheckCertificate(t *testing.T) {
	keyPEM, _, err := newCSR("edge-1", "a1", 0)
	if err != nil {
		t.Fatal(err)
	}
	otherKeyPEM, _, _ := newCSR("edge-1", "a1", 0)
	good := signedCert(t, keyPEM, "system:open-cluster-management:edge-1:a1", time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
	for _, tc := range []struct {
		name           string
		certPEM, key   []byte
		cluster, agent string
		wantErr        string
	}{
		{name: "matching", certPEM: good, key: keyPEM, cluster: "edge-1", agent: "a1"},
		{name: "another key", certPEM: good, key: otherKeyPEM, cluster: "edge-1", agent: "a1", wantErr: "does not match the private key"},
		{name: "another agent", certPEM: good, key: keyPEM, cluster: "edge-1", agent: "a2", wantErr: `not "system:open-cluster-management:edge-1:a2"`},
		{name: "not a certificate", certPEM: []byte("junk"), key: keyPEM, cluster: "edge-1", agent: "a1", wantErr: "does not match"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			cert, err := checkCertificate(tc.certPEM, tc.key, tc.cluster, tc.agent)
			if tc.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(cert.Subject.CommonName).To(Equal("system:open-cluster-management:edge-1:a1"))
		})
	}
}

// signedCert returns a client certificate for keyPEM from a throwaway CA.
func signedCert(t *testing.T, keyPEM []byte, cn string, notBefore, notAfter time.Time) []byte {
	t.Helper()
	key, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"}, IsCA: true, BasicConstraintsValid: true,
		NotBefore: notBefore, NotAfter: notAfter, KeyUsage: x509.KeyUsageCertSign}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: cn}, NotBefore: notBefore, NotAfter: notAfter,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.(*ecdsa.PrivateKey).Public(), caKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
