package registration

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"math/big"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/identity"
)

// customSignedLifetime is how long a custom signer's certificate lives,
// at most.
const customSignedLifetime = 24 * time.Hour

// sign issues the certificate of an approved CSR of a template's custom
// signer with the CA of cfg's signingCA Secret.
func (r *Reconciler) sign(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, cfg *addonv1alpha1.CustomSignerRegistrationConfig) error {
	key := client.ObjectKey{Namespace: cfg.SigningCA.Namespace, Name: cfg.SigningCA.Name}
	if key.Namespace == "" {
		key.Namespace = HubNamespace
	}
	secret := &corev1.Secret{}
	if err := r.APIReader.Get(ctx, key, secret); err != nil {
		r.Recorder.Eventf(csr, nil, corev1.EventTypeWarning, reasonSignFailed, "Sign", "CSR %s: cannot read the signing CA Secret %s: %s", csr.Name, key, err.Error())
		return fmt.Errorf("read the signing CA Secret %s of signer %s: %w", key, cfg.SignerName, err)
	}
	certPEM, err := signRequest(csr.Spec.Request, secret.Data[corev1.TLSCertKey], secret.Data[corev1.TLSPrivateKeyKey], time.Now())
	if err != nil {
		r.Recorder.Eventf(csr, nil, corev1.EventTypeWarning, reasonSignFailed, "Sign", "CSR %s: %s", csr.Name, err.Error())
		return fmt.Errorf("sign CSR %s with the CA of Secret %s: %w", csr.Name, key, err)
	}
	csr.Status.Certificate = certPEM
	if err := r.Client.Status().Update(ctx, csr); err != nil {
		return fmt.Errorf("write the certificate of CSR %s: %w", csr.Name, err)
	}
	klog.FromContext(ctx).Info("Signed an add-on agent's CSR", "csr", csr.Name, "signer", cfg.SignerName)
	r.Recorder.Eventf(csr, nil, corev1.EventTypeNormal, reasonSigned, "Sign", "CSR %s was signed by %s with the CA of Secret %s", csr.Name, cfg.SignerName, key)
	return nil
}

// signRequest signs the PEM certificate request with the CA caCertPEM,
// caKeyPEM at time now: the request's subject and SANs, usages digital
// signature and key encipherment, server and client auth, valid for a day
// or until the CA expires.
func signRequest(requestPEM, caCertPEM, caKeyPEM []byte, now time.Time) ([]byte, error) {
	req, err := identity.ParseCertificateRequest(requestPEM)
	if err != nil {
		return nil, err
	}
	pair, err := tls.X509KeyPair(caCertPEM, caKeyPEM)
	if err != nil {
		return nil, fmt.Errorf("the signing CA's tls.crt and tls.key are no key pair: %w", err)
	}
	ca, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("parse the signing CA's certificate: %w", err)
	}
	signer, ok := pair.PrivateKey.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("the signing CA's key cannot sign")
	}
	if !now.Before(ca.NotAfter) {
		return nil, fmt.Errorf("the signing CA expired at %s", ca.NotAfter.UTC().Format(time.RFC3339))
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, err
	}
	notAfter := now.Add(customSignedLifetime)
	if ca.NotAfter.Before(notAfter) {
		notAfter = ca.NotAfter
	}
	tmpl := &x509.Certificate{
		SerialNumber:   serial,
		Subject:        req.Subject,
		DNSNames:       req.DNSNames,
		IPAddresses:    req.IPAddresses,
		URIs:           req.URIs,
		EmailAddresses: req.EmailAddresses,
		NotBefore:      now.Add(-time.Minute),
		NotAfter:       notAfter,
		KeyUsage:       x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:    []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, req.PublicKey, signer)
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}
