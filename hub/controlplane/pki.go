package controlplane

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// Files of the PKI directory. The CA signs the serving certificate, every
// client certificate (the admin's, the controller manager's, and the agents'
// through the CSR signer), so one file is the whole trust root.
const (
	caCertFile      = "ca.crt"
	caKeyFile       = "ca.key"
	servingCertFile = "apiserver.crt"
	servingKeyFile  = "apiserver.key"
	saKeyFile       = "sa.key"
	saPubFile       = "sa.pub"
	adminCertFile   = "admin.crt"
	adminKeyFile    = "admin.key"
	kcmCertFile     = "controller-manager.crt"
	kcmKeyFile      = "controller-manager.key"
)

// The CA itself is valid for ten years (certutil's choice).
const (
	leafValidity = 365 * 24 * time.Hour
	// renewBefore re-issues a leaf certificate at start when less than this remains.
	renewBefore = 30 * 24 * time.Hour
)

// pki is the loaded certificate authority of a control plane.
type pki struct {
	dir    string
	caCert *x509.Certificate
	caKey  crypto.Signer
	caPEM  []byte
}

// ensurePKI loads the PKI under dir, creating it on first start. Creation
// happens in a sibling directory that is renamed into place only when
// complete, so a failed first start leaves no partial CA behind.
func ensurePKI(dir string, hosts []string, ips []net.IP) (*pki, error) {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		if err := createPKI(dir); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	p, err := loadCA(dir)
	if err != nil {
		return nil, err
	}
	if err := p.ensureServing(hosts, ips); err != nil {
		return nil, err
	}
	return p, nil
}

func createPKI(dir string) error {
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".pki-")
	if err != nil {
		return fmt.Errorf("cannot create the certificate directory: %w", err)
	}
	defer os.RemoveAll(tmp)

	key, err := newKey()
	if err != nil {
		return err
	}
	ca, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: "flotilla-ca", Organization: []string{"flotilla"}}, key)
	if err != nil {
		return fmt.Errorf("create CA: %w", err)
	}
	if err := writePair(tmp, caCertFile, caKeyFile, ca, key); err != nil {
		return err
	}
	saKey, err := newKey()
	if err != nil {
		return err
	}
	saPriv, err := keyutil.MarshalPrivateKeyToPEM(saKey)
	if err != nil {
		return err
	}
	saPub, err := encodePublicKey(saKey.Public())
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(tmp, saKeyFile), saPriv, 0o600); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(tmp, saPubFile), saPub, 0o644); err != nil {
		return err
	}
	p := &pki{dir: tmp, caCert: ca, caKey: key}
	if err := failPKIStep("client certificates"); err != nil {
		return err
	}
	if err := p.issueClient(adminCertFile, adminKeyFile, "flotilla:admin", "system:masters"); err != nil {
		return err
	}
	if err := p.issueClient(kcmCertFile, kcmKeyFile, "system:kube-controller-manager", "system:masters"); err != nil {
		return err
	}
	if err := syncDir(tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("cannot move the new certificates into place: %w", err)
	}
	return syncDir(filepath.Dir(dir))
}

// failPKIStep lets tests interrupt the creation of the PKI half-way.
var failPKIStep = func(string) error { return nil }

func loadCA(dir string) (*pki, error) {
	p, err := loadCAFiles(dir, caCertFile, caKeyFile)
	if err != nil {
		return nil, err
	}
	// A data directory started from a copy of another hub member's CA and
	// keys (docs/ha.md) makes its own client certificates.
	for _, c := range []struct{ cert, key, cn, group string }{
		{adminCertFile, adminKeyFile, "flotilla:admin", "system:masters"},
		{kcmCertFile, kcmKeyFile, "system:kube-controller-manager", "system:masters"},
	} {
		if _, err := os.Stat(p.path(c.cert)); errors.Is(err, os.ErrNotExist) {
			if err := p.issueClient(c.cert, c.key, c.cn, c.group); err != nil {
				return nil, err
			}
		}
	}
	for _, f := range []string{saKeyFile, saPubFile} {
		if _, err := os.Stat(p.path(f)); err != nil {
			return nil, fmt.Errorf("%s is missing (%w): copy it with the CA from the hub whose pki/ this is", p.path(f), err)
		}
	}
	return p, nil
}

// createCA writes a new self-signed CA into dir.
func createCA(dir, certFile, keyFile, cn string) error {
	key, err := newKey()
	if err != nil {
		return err
	}
	ca, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: cn, Organization: []string{"flotilla"}}, key)
	if err != nil {
		return fmt.Errorf("create CA %s: %w", cn, err)
	}
	return writePair(dir, certFile, keyFile, ca, key)
}

// loadCAFiles loads the CA of dir/certFile and dir/keyFile.
func loadCAFiles(dir, certFile, keyFile string) (*pki, error) {
	caCertFile, caKeyFile := certFile, keyFile
	certPEM, err := os.ReadFile(filepath.Join(dir, caCertFile))
	if err != nil {
		return nil, fmt.Errorf("read CA certificate: %w", err)
	}
	certs, err := certutil.ParseCertsPEM(certPEM)
	if err != nil || len(certs) == 0 {
		return nil, fmt.Errorf("%s is corrupt (%v): restore it from a backup, or start with an empty data directory", filepath.Join(dir, caCertFile), err)
	}
	key, err := keyutil.PrivateKeyFromFile(filepath.Join(dir, caKeyFile))
	if err != nil {
		return nil, fmt.Errorf("%s is unreadable or corrupt (%v): restore it from a backup, or start with an empty data directory", filepath.Join(dir, caKeyFile), err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%s: not a signing key", filepath.Join(dir, caKeyFile))
	}
	return &pki{dir: dir, caCert: certs[0], caKey: signer, caPEM: certPEM}, nil
}

// ensureServing issues the API server's serving certificate when it is
// missing, near expiry, or does not cover every name it must answer to (the
// advertise address may change between starts).
func (p *pki) ensureServing(hosts []string, ips []net.IP) error {
	return p.ensureServingPair(p.dir, servingCertFile, servingKeyFile, "flotilla-apiserver", hosts, ips)
}

// ensureServingPair issues a serving certificate signed by the CA into
// dir/certFile and dir/keyFile, unless the one there is still good: not near
// expiry, covering hosts and ips, and signed by this CA.
func (p *pki) ensureServingPair(dir, certFile, keyFile, cn string, hosts []string, ips []net.IP) error {
	return p.ensurePair(dir, certFile, keyFile, cn, hosts, ips, false)
}

// ensurePair is ensureServingPair for a certificate that also
// authenticates as a client when client is set (etcd peers do both).
func (p *pki) ensurePair(dir, certFile, keyFile, cn string, hosts []string, ips []net.IP, client bool) error {
	certPath := filepath.Join(dir, certFile)
	if data, err := os.ReadFile(certPath); err == nil {
		if certs, err := certutil.ParseCertsPEM(data); err == nil && len(certs) > 0 && covers(certs[0], hosts, ips) &&
			time.Until(certs[0].NotAfter) > renewBefore && certs[0].CheckSignatureFrom(p.caCert) == nil {
			return nil
		}
	}
	key, err := newKey()
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn},
		DNSNames:    hosts,
		IPAddresses: ips,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if client {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	cert, err := p.sign(tmpl, key.Public())
	if err != nil {
		return err
	}
	return writePair(dir, certFile, keyFile, cert, key)
}

func covers(cert *x509.Certificate, hosts []string, ips []net.IP) bool {
	for _, h := range hosts {
		if !slices.Contains(cert.DNSNames, h) {
			return false
		}
	}
	for _, ip := range ips {
		if !slices.ContainsFunc(cert.IPAddresses, ip.Equal) {
			return false
		}
	}
	return true
}

func (p *pki) issueClient(certFile, keyFile, cn string, groups ...string) error {
	key, err := newKey()
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn, Organization: groups},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	cert, err := p.sign(tmpl, key.Public())
	if err != nil {
		return err
	}
	return writePair(p.dir, certFile, keyFile, cert, key)
}

func (p *pki) sign(tmpl *x509.Certificate, pub crypto.PublicKey) (*x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl.SerialNumber = serial
	tmpl.NotBefore = now.Add(-5 * time.Minute)
	tmpl.NotAfter = now.Add(leafValidity)
	if tmpl.NotAfter.After(p.caCert.NotAfter) {
		tmpl.NotAfter = p.caCert.NotAfter
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, pub, p.caKey)
	if err != nil {
		return nil, fmt.Errorf("sign certificate %q: %w", tmpl.Subject.CommonName, err)
	}
	return x509.ParseCertificate(der)
}

func (p *pki) path(name string) string { return filepath.Join(p.dir, name) }

func newKey() (*ecdsa.PrivateKey, error) {
	return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
}

func writePair(dir, certFile, keyFile string, cert *x509.Certificate, key crypto.Signer) error {
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, keyFile), keyPEM, 0o600); err != nil {
		return err
	}
	certPEM, err := certutil.EncodeCertificates(cert)
	if err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, certFile), certPEM, 0o644)
}

func encodePublicKey(pub crypto.PublicKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, err
	}
	return pemEncode("PUBLIC KEY", der), nil
}
