package cli

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

// Subject names of an agent's client certificate (contract, Registration step 2).
const (
	clusterGroupPrefix   = "system:open-cluster-management:"
	managedClustersGroup = "system:open-cluster-management:managed-clusters"
)

// clientUsages are the key usages an agent's CSR may ask for.
var clientUsages = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth}

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
		return fmt.Errorf("it was requested by %q, which is not a join identity (a bootstrap token in group %s, or %s)", csr.Spec.Username, bootstrapGroup, bootstrapServiceAccount)
	}
	for _, u := range csr.Spec.Usages {
		if !slices.Contains(clientUsages, u) {
			return fmt.Errorf("it asks for key usage %q, beyond a client certificate's", u)
		}
	}
	if !slices.Contains(csr.Spec.Usages, certificatesv1.UsageClientAuth) {
		return errors.New("it does not ask for client auth")
	}
	req, err := parseCertificateRequest(csr.Spec.Request)
	if err != nil {
		return err
	}
	return checkSubject(req, cluster)
}

// isBootstrapRequester says whether a CSR's requester is a join identity.
func isBootstrapRequester(user string, groups []string) bool {
	if user == bootstrapServiceAccount {
		return true
	}
	return strings.HasPrefix(user, "system:bootstrap:") && slices.Contains(groups, bootstrapGroup)
}

func parseCertificateRequest(data []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("its request is not a PEM CERTIFICATE REQUEST")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("its request cannot be parsed: %w", err)
	}
	if err := req.CheckSignature(); err != nil {
		return nil, fmt.Errorf("its request has a bad signature: %w", err)
	}
	return req, nil
}

// checkSubject requires CN=system:open-cluster-management:<cluster>:<agent>
// and O within [system:open-cluster-management:<cluster>,
// system:open-cluster-management:managed-clusters], the former included.
func checkSubject(req *x509.CertificateRequest, cluster string) error {
	clusterGroup := clusterGroupPrefix + cluster
	cn := req.Subject.CommonName
	agent, ok := strings.CutPrefix(cn, clusterGroup+":")
	if !ok || agent == "" || strings.Contains(agent, ":") {
		return fmt.Errorf("its subject CN %q does not name cluster %s (want %s:<agent-id>)", cn, cluster, clusterGroup)
	}
	orgs := req.Subject.Organization
	if !slices.Contains(orgs, clusterGroup) {
		return fmt.Errorf("its subject O %v does not include %s", orgs, clusterGroup)
	}
	for _, o := range orgs {
		if o != clusterGroup && o != managedClustersGroup {
			return fmt.Errorf("its subject O %v asks for group %q, which agents never need", orgs, o)
		}
	}
	if len(req.DNSNames)+len(req.IPAddresses)+len(req.EmailAddresses)+len(req.URIs) > 0 {
		return errors.New("it asks for subject alternative names, which agents' client certificates never have")
	}
	return nil
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
