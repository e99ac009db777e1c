package registration

import (
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/internal/identity"
)

// renewal is an agent's request for a new client certificate.
type renewal struct {
	cluster, agent string
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
	requester, agent, ok := identity.ParseAgentUser(csr.Spec.Username)
	if !ok {
		return renewal{}, fmt.Errorf("requester %q is not a cluster agent (%s<cluster>:<agent>)", csr.Spec.Username, identity.Prefix)
	}
	if requester != cluster {
		return renewal{}, fmt.Errorf("requester %q is an agent of cluster %q, but the CSR is labelled %q", csr.Spec.Username, requester, cluster)
	}
	if err := identity.CheckClientUsages(csr.Spec.Usages); err != nil {
		return renewal{}, err
	}
	req, err := identity.ParseCertificateRequest(csr.Spec.Request)
	if err != nil {
		return renewal{}, err
	}
	if req.Subject.CommonName != csr.Spec.Username {
		return renewal{}, fmt.Errorf("the request is for user %q, not the requester %q", req.Subject.CommonName, csr.Spec.Username)
	}
	if _, err := identity.CheckAgentSubject(req, cluster); err != nil {
		return renewal{}, err
	}
	return renewal{cluster: cluster, agent: agent}, nil
}
