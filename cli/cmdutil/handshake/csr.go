package handshake

import (
	"fmt"
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/hub/bootstraptoken"
	"github.com/flotilla-io/flotilla/internal/identity"
)

// checkCSR returns nil when accept may approve csr for cluster: it is
// labelled for the cluster, was made by a bootstrap identity, and asks for
// a client certificate for the cluster's agent and nothing else. Otherwise
// the error says what is wrong with it.
//
// The subject matters most: the kube-apiserver-client signer signs any
// subject, so approving a CSR that names another cluster, or a group like
// system:masters, would hand out that identity.
func checkCSR(csr *certificatesv1.CertificateSigningRequest, cluster string) error {
	if got := csr.Labels[clusterv1.ClusterNameLabel]; got != cluster {
		return fmt.Errorf("it is labelled %s=%q, not %q", clusterv1.ClusterNameLabel, got, cluster)
	}
	if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientSignerName {
		return fmt.Errorf("its signer is %q, not %s", csr.Spec.SignerName, certificatesv1.KubeAPIServerClientSignerName)
	}
	if !isBootstrapRequester(csr.Spec.Username, csr.Spec.Groups) {
		return fmt.Errorf("it was requested by %q, which is not a join identity (a bootstrap token in group %s, %s or %s)", csr.Spec.Username, BootstrapGroup, bootstraptoken.ServiceAccountUser, bootstrapServiceAccount)
	}
	if err := identity.CheckClientUsages(csr.Spec.Usages); err != nil {
		return err
	}
	req, err := identity.ParseCertificateRequest(csr.Spec.Request)
	if err != nil {
		return err
	}
	_, err = identity.CheckAgentSubject(req, cluster)
	return err
}

// isBootstrapRequester says whether a CSR's requester is a join identity.
func isBootstrapRequester(user string, groups []string) bool {
	if user == bootstrapServiceAccount || user == bootstraptoken.ServiceAccountUser {
		return true
	}
	return strings.HasPrefix(user, "system:bootstrap:") && slices.Contains(groups, BootstrapGroup)
}

// csrState says whether a CSR is still waiting for a decision.
func csrState(csr *certificatesv1.CertificateSigningRequest) string {
	for _, c := range csr.Status.Conditions {
		if c.Status != corev1.ConditionTrue && c.Status != "" {
			continue
		}
		switch c.Type {
		case certificatesv1.CertificateApproved:
			return "approved"
		case certificatesv1.CertificateDenied:
			return "denied"
		case certificatesv1.CertificateFailed:
			return "failed"
		}
	}
	return "pending"
}
