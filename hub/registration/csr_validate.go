package registration

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
)

// renewal is an agent's request for a new client certificate.
type renewal struct {
	cluster, agent string
}

// allowedUsages are the key usages of an agent's client certificate.
var allowedUsages = []certificatesv1.KeyUsage{
	certificatesv1.UsageDigitalSignature,
	certificatesv1.UsageKeyEncipherment,
	certificatesv1.UsageClientAuth,
}

// isClusterCSR says whether a CSR is of the kind this package looks at:
// for the kube-apiserver-client signer, labelled with a cluster name.
func isClusterCSR(csr *certificatesv1.CertificateSigningRequest) bool {
	return csr.Spec.SignerName == certificatesv1.KubeAPIServerClientSignerName &&
		csr.Labels[clusterv1.ClusterNameLabel] != ""
}

// pending says whether a CSR still awaits a decision.
func pending(csr *certificatesv1.CertificateSigningRequest) bool {
	if len(csr.Status.Certificate) > 0 {
		return false
	}
	for _, c := range csr.Status.Conditions {
		if c.Status == corev1.ConditionTrue || c.Status == "" {
			switch c.Type {
			case certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed:
				return false
			}
		}
	}
	return true
}

// parseRenewal says whether csr is a certificate renewal that an agent
// asked for with its current certificate, and for which cluster. It is one
// when the requester is system:open-cluster-management:<c>:<agent>, the
// label names <c>, and the request asks for exactly that user with exactly
// the groups of <c>'s agents, as a client certificate and nothing else.
// The error says why a CSR is not one. Whether <c> is accepted and the
// requester may renew is for the caller to check.
func parseRenewal(csr *certificatesv1.CertificateSigningRequest) (renewal, error) {
	if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientSignerName {
		return renewal{}, fmt.Errorf("signer is %q, not %q", csr.Spec.SignerName, certificatesv1.KubeAPIServerClientSignerName)
	}
	cluster := csr.Labels[clusterv1.ClusterNameLabel]
	if cluster == "" {
		return renewal{}, fmt.Errorf("no %s label", clusterv1.ClusterNameLabel)
	}
	requester, ok := strings.CutPrefix(csr.Spec.Username, SubjectPrefix)
	parts := strings.Split(requester, ":")
	if !ok || len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return renewal{}, fmt.Errorf("requester %q is not a cluster agent (%s<cluster>:<agent>)", csr.Spec.Username, SubjectPrefix)
	}
	if parts[0] != cluster {
		return renewal{}, fmt.Errorf("requester %q is an agent of cluster %q, but the CSR is labelled %q", csr.Spec.Username, parts[0], cluster)
	}
	for _, u := range csr.Spec.Usages {
		if !slices.Contains(allowedUsages, u) {
			return renewal{}, fmt.Errorf("usage %q is not one of a client certificate's", u)
		}
	}
	if !slices.Contains(csr.Spec.Usages, certificatesv1.UsageClientAuth) {
		return renewal{}, errors.New("usage client auth is missing")
	}
	req, err := parseRequest(csr.Spec.Request)
	if err != nil {
		return renewal{}, err
	}
	if req.Subject.CommonName != csr.Spec.Username {
		return renewal{}, fmt.Errorf("the request is for user %q, not the requester %q", req.Subject.CommonName, csr.Spec.Username)
	}
	// Every organization becomes a group of the certificate's user: anything
	// but the two agent groups would be a privilege the agent does not have.
	orgs := slices.Clone(req.Subject.Organization)
	slices.Sort(orgs)
	want := []string{ClusterGroup(cluster), ManagedClustersGroup}
	slices.Sort(want)
	if !slices.Equal(slices.Compact(orgs), want) {
		return renewal{}, fmt.Errorf("the request is for groups %q, not exactly %q", req.Subject.Organization, want)
	}
	if len(req.DNSNames)+len(req.EmailAddresses)+len(req.IPAddresses)+len(req.URIs) > 0 {
		return renewal{}, errors.New("the request has subject alternative names")
	}
	return renewal{cluster: cluster, agent: parts[1]}, nil
}

// parseRequest decodes and verifies a PEM certificate request.
func parseRequest(data []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("the request is not a PEM CERTIFICATE REQUEST")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parse the request: %w", err)
	}
	if err := req.CheckSignature(); err != nil {
		return nil, fmt.Errorf("the request's signature: %w", err)
	}
	return req, nil
}
