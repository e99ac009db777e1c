package addon

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
	"k8s.io/utils/ptr"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/addon"
)

// Keys of a registration's Secret.
const (
	keyCert        = "tls.crt"
	keyKey         = "tls.key"
	keyClusterName = "cluster-name"
	keyKubeconfig  = "kubeconfig"
	// hashAnnotation on a Secret is the hash of the registration it holds.
	hashAnnotation = "addon.flotilla.io/registration-hash"
)

// The contract rotates a certificate when between rotateAtMin and
// rotateAtMax of its life is left.
const (
	rotateAtMin = 0.20
	rotateAtMax = 0.25
)

// newCSR returns a fresh key and a CSR for reg of cluster c.
func newCSR(c string, reg *registration, expiration time.Duration) ([]byte, *certificatesv1.CertificateSigningRequest, error) {
	keyPEM, err := keyutil.MakeEllipticPrivateKeyPEM()
	if err != nil {
		return nil, nil, fmt.Errorf("generate private key: %w", err)
	}
	key, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return nil, nil, err
	}
	request, err := certutil.MakeCSR(key, &pkix.Name{
		CommonName:         reg.subject.User,
		Organization:       reg.subject.Groups,
		OrganizationalUnit: reg.subject.OrganizationUnits,
	}, []string{reg.addon + "." + addon.AddOnDNSSuffix}, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("create certificate request: %w", err)
	}
	csr := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: addon.CSRGenerateName(c, reg.addon),
			Labels:       map[string]string{addon.ClusterNameLabel: c, addon.AddOnNameLabel: reg.addon},
		},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    request,
			SignerName: reg.signer,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth},
		},
	}
	if expiration > 0 {
		csr.Spec.ExpirationSeconds = ptr.To(int32(expiration / time.Second))
	}
	return keyPEM, csr, nil
}

// csrOutcome reads a CSR: its certificate once issued, or why it never
// will be ("" while it waits).
func csrOutcome(csr *certificatesv1.CertificateSigningRequest) (certPEM []byte, refused string) {
	for _, c := range csr.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case certificatesv1.CertificateDenied, certificatesv1.CertificateFailed:
			return nil, fmt.Sprintf("CSR %s: %s (%s: %s)", csr.Name, c.Type, c.Reason, c.Message)
		}
	}
	return csr.Status.Certificate, ""
}

// checkPair verifies that certPEM is a certificate for keyPEM with reg's
// subject, and returns it.
func checkPair(certPEM, keyPEM []byte, reg *registration) (*x509.Certificate, error) {
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("the certificate does not match the key: %w", err)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("parse certificate: %w", err)
	}
	if !sameSubject(cert.Subject, reg.subject) {
		return nil, fmt.Errorf("the certificate's subject %q is not the registration's (user %q, groups %q, organizational units %q)",
			cert.Subject.String(), reg.subject.User, reg.subject.Groups, reg.subject.OrganizationUnits)
	}
	return cert, nil
}

func sameSubject(n pkix.Name, s addonv1alpha1.Subject) bool {
	sorted := func(v []string) []string { v = slices.Clone(v); slices.Sort(v); return slices.Compact(v) }
	return n.CommonName == s.User && slices.Equal(sorted(n.Organization), sorted(s.Groups)) &&
		slices.Equal(sorted(n.OrganizationalUnit), sorted(s.OrganizationUnits))
}

// rotationDeadline is when to renew cert: renewBefore ahead of its expiry
// when set, else when a fraction of its life between rotateAtMin and
// rotateAtMax is left, drawn from its serial number so that the draw is
// the same on every look and differs between certificates.
func rotationDeadline(cert *x509.Certificate, renewBefore time.Duration) time.Time {
	if renewBefore > 0 {
		return cert.NotAfter.Add(-renewBefore)
	}
	sum := sha256.Sum256(cert.SerialNumber.Bytes())
	draw := float64(binary.BigEndian.Uint64(sum[:8])) / float64(^uint64(0))
	life := cert.NotAfter.Sub(cert.NotBefore)
	left := rotateAtMin + draw*(rotateAtMax-rotateAtMin)
	return cert.NotAfter.Add(-time.Duration(float64(life) * left))
}

// kubeconfig is the add-on's hub kubeconfig: the hub as the agent reaches
// it, and a user whose certificate and key are the files beside it.
func kubeconfig(hub *clientcmdapi.Cluster) ([]byte, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["hub"] = &clientcmdapi.Cluster{
		Server: hub.Server, CertificateAuthorityData: hub.CertificateAuthorityData,
		TLSServerName: hub.TLSServerName, ProxyURL: hub.ProxyURL,
	}
	kc.AuthInfos["default-auth"] = &clientcmdapi.AuthInfo{ClientCertificate: keyCert, ClientKey: keyKey}
	kc.Contexts["default-context"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: "default-auth", Namespace: "configuration"}
	kc.CurrentContext = "default-context"
	return clientcmd.Write(*kc)
}

// secretProblem says why a registration's Secret needs a new certificate
// at time now, or "" with its rotation deadline when it does not.
func secretProblem(s *corev1.Secret, reg *registration, c string, wantKubeconfig []byte, renewBefore time.Duration, now time.Time) (string, time.Time) {
	if s == nil {
		return "no Secret yet", time.Time{}
	}
	cert, err := checkPair(s.Data[keyCert], s.Data[keyKey], reg)
	switch {
	case err != nil:
		return err.Error(), time.Time{}
	case string(s.Data[keyClusterName]) != c:
		return "the Secret names another cluster", time.Time{}
	case reg.kubeClient() && !bytes.Equal(s.Data[keyKubeconfig], wantKubeconfig):
		return "the kubeconfig changed", time.Time{}
	}
	deadline := rotationDeadline(cert, renewBefore)
	if !now.Before(deadline) {
		return fmt.Sprintf("the certificate expires at %s", cert.NotAfter.UTC().Format(time.RFC3339)), time.Time{}
	}
	return "", deadline
}
