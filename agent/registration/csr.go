package registration

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	certificatesclient "k8s.io/client-go/kubernetes/typed/certificates/v1"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/internal/identity"
)

// MaxPendingCSRs is how many of its own CSRs may wait for approval before
// an agent stops creating more.
const MaxPendingCSRs = 10

// csrRequest is a CSR being waited for, with the private key that only this
// process knows.
type csrRequest struct {
	name   string
	keyPEM []byte
	// resourceVersion is the newest version of the CSR seen: the agent
	// watches from it, and a read after the watch ends need be no older.
	// Empty: read the CSR as etcd has it now.
	resourceVersion string
}

// newCSR returns a new private key and a CSR for the client certificate of
// agent id of cluster c, as the contract spells it.
func newCSR(c, id string, expiration time.Duration) ([]byte, *certificatesv1.CertificateSigningRequest, error) {
	keyPEM, err := keyutil.MakeEllipticPrivateKeyPEM()
	if err != nil {
		return nil, nil, fmt.Errorf("generate private key: %w", err)
	}
	key, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return nil, nil, err
	}
	request, err := certutil.MakeCSR(key, &pkix.Name{
		CommonName:   identity.AgentUser(c, id),
		Organization: identity.AgentGroups(c),
	}, nil, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("create certificate request: %w", err)
	}
	csr := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: c + "-",
			Labels:       map[string]string{clusterv1.ClusterNameLabel: c},
		},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    request,
			SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages: []certificatesv1.KeyUsage{
				certificatesv1.UsageDigitalSignature,
				certificatesv1.UsageKeyEncipherment,
				certificatesv1.UsageClientAuth,
			},
		},
	}
	if expiration > 0 {
		csr.Spec.ExpirationSeconds = ptr.To(int32(expiration / time.Second))
	}
	return keyPEM, csr, nil
}

// pendingOwn counts the CSRs of agent id of cluster c that wait for a decision.
func pendingOwn(csrs []certificatesv1.CertificateSigningRequest, c, id string) int {
	n := 0
	for i := range csrs {
		csr := &csrs[i]
		if csr.Labels[clusterv1.ClusterNameLabel] != c || decided(csr) || len(csr.Status.Certificate) > 0 {
			continue
		}
		if req, err := identity.ParseCertificateRequest(csr.Spec.Request); err == nil && req.Subject.CommonName == identity.AgentUser(c, id) {
			n++
		}
	}
	return n
}

func decided(csr *certificatesv1.CertificateSigningRequest) bool {
	for _, cond := range csr.Status.Conditions {
		switch cond.Type {
		case certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed:
			return true
		}
	}
	return false
}

// errTooManyPending stops an agent from adding to a queue of CSRs that
// nobody approves.
var errTooManyPending = fmt.Errorf("%d CSRs of this agent are waiting for approval: not creating another until a hub admin approves or denies them (flotilla accept)", MaxPendingCSRs)

// errCSRGone means the CSR waited for was denied, failed or deleted; the
// agent asks again with a new one.
var errCSRGone = errors.New("asking again with a new CSR")

// requestCertificate creates a CSR for agent id of cluster c, unless too
// many of its CSRs already wait for approval. The count of pending CSRs is
// read from the API server's watch cache (ResourceVersion "0"), not from
// etcd: a fleet joining at once would otherwise make each agent's check a
// read of every cluster's CSRs; the cache is at most moments behind, and
// the limit is a guard against a runaway loop, not a quota.
func requestCertificate(ctx context.Context, api certificatesclient.CertificateSigningRequestInterface, c, id string, expiration time.Duration) (*csrRequest, error) {
	list, err := api.List(ctx, metav1.ListOptions{LabelSelector: labels.Set{clusterv1.ClusterNameLabel: c}.String(), ResourceVersion: "0"})
	if err != nil {
		return nil, fmt.Errorf("list CSRs: %w", err)
	}
	if pendingOwn(list.Items, c, id) >= MaxPendingCSRs {
		return nil, errTooManyPending
	}
	keyPEM, csr, err := newCSR(c, id, expiration)
	if err != nil {
		return nil, err
	}
	created, err := api.Create(ctx, csr, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create CSR: %w", err)
	}
	return &csrRequest{name: created.Name, keyPEM: keyPEM, resourceVersion: created.ResourceVersion}, nil
}

// waitForCertificate waits until the CSR req of cluster c is approved and
// issued, and returns the certificate. It returns an error wrapping
// errCSRGone when the CSR was denied, failed or deleted, and any other
// error as it comes, for the caller to retry. It reads and watches the CSR
// with the cluster's label selector as well as its name: the hub lets a
// cluster's agent read CSRs only so.
//
// It watches from the newest version of the CSR it has seen (at first the
// one its create returned), so that a CSR approved before the watch began
// still arrives as an event; it reads the CSR only when the server ends a
// watch, from the API server's cache no older than that version, and from
// etcd only when the cache no longer holds it (410 Gone).
func waitForCertificate(ctx context.Context, api certificatesclient.CertificateSigningRequestInterface, c string, req *csrRequest) ([]byte, error) {
	selectors := metav1.ListOptions{
		LabelSelector: labels.Set{clusterv1.ClusterNameLabel: c}.String(),
		FieldSelector: fields.OneTermEqualSelector("metadata.name", req.name).String(),
	}
	read := req.resourceVersion == ""
	for {
		if read {
			opts := selectors
			if req.resourceVersion != "" {
				opts.ResourceVersion, opts.ResourceVersionMatch = req.resourceVersion, metav1.ResourceVersionMatchNotOlderThan
			}
			list, err := api.List(ctx, opts)
			if tooOld(err) {
				req.resourceVersion = ""
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("read CSR %s: %w", req.name, err)
			}
			if len(list.Items) == 0 {
				return nil, fmt.Errorf("CSR %s no longer exists: %w", req.name, errCSRGone)
			}
			if done, err := issued(&list.Items[0]); done || err != nil {
				return list.Items[0].Status.Certificate, err
			}
			req.resourceVersion = list.ResourceVersion
		}
		opts := selectors
		opts.ResourceVersion = req.resourceVersion
		w, err := api.Watch(ctx, opts)
		if tooOld(err) {
			req.resourceVersion, read = "", true
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("watch CSR %s: %w", req.name, err)
		}
		certPEM, err := watchUntilIssued(ctx, w, req)
		if tooOld(err) {
			req.resourceVersion, read = "", true
			continue
		}
		if certPEM != nil || err != nil {
			return certPEM, err
		}
		// The server ended the watch: read the CSR again and go on watching.
		read = true
	}
}

// tooOld says whether err is the API server's answer that the version
// asked for is no longer in its cache (410 Gone).
func tooOld(err error) bool { return apierrors.IsResourceExpired(err) || apierrors.IsGone(err) }

// watchUntilIssued follows w until the CSR is issued, gone, or the watch
// ends (nil, nil), recording each version seen in req.
func watchUntilIssued(ctx context.Context, w watch.Interface, req *csrRequest) ([]byte, error) {
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil, nil
			}
			switch ev.Type {
			case watch.Error:
				return nil, apierrors.FromObject(ev.Object)
			case watch.Deleted:
				return nil, fmt.Errorf("CSR was deleted: %w", errCSRGone)
			}
			csr, ok := ev.Object.(*certificatesv1.CertificateSigningRequest)
			if !ok {
				continue
			}
			req.resourceVersion = csr.ResourceVersion
			if done, err := issued(csr); done || err != nil {
				return csr.Status.Certificate, err
			}
		}
	}
}

// issued reports whether csr carries its certificate, or wraps errCSRGone
// when it never will.
func issued(csr *certificatesv1.CertificateSigningRequest) (bool, error) {
	for _, cond := range csr.Status.Conditions {
		if cond.Status != corev1.ConditionTrue {
			continue
		}
		switch cond.Type {
		case certificatesv1.CertificateDenied, certificatesv1.CertificateFailed:
			return false, fmt.Errorf("CSR %s: %s (%s: %s): %w", csr.Name, cond.Type, cond.Reason, cond.Message, errCSRGone)
		}
	}
	return len(csr.Status.Certificate) > 0, nil
}

// checkCertificate verifies that certPEM holds a client certificate for keyPEM
// issued to agent id of cluster c, and returns it parsed.
func checkCertificate(certPEM, keyPEM []byte, c, id string) (*x509.Certificate, error) {
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("the certificate does not match the private key: %w", err)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("parse certificate: %w", err)
	}
	if want := identity.AgentUser(c, id); cert.Subject.CommonName != want {
		return nil, fmt.Errorf("the certificate names %q, not %q", cert.Subject.CommonName, want)
	}
	return cert, nil
}
