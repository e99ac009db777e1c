// Package identity names the identities of the registration protocol (the
// users and groups of cluster agents) and checks the certificate requests
// that claim them. The agent builds its CSRs from these names; the hub's
// renewal approver and `flotilla accept` check CSRs against them.
package identity

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

const (
	// Prefix begins the user and group names of every cluster agent:
	// user system:open-cluster-management:<c>:<agent>, group
	// system:open-cluster-management:<c>.
	Prefix = "system:open-cluster-management:"
	// ManagedClustersGroup is the group every cluster agent's certificate carries.
	ManagedClustersGroup = Prefix + "managed-clusters"
)

// IsClusterAgentCEL is a CEL expression of admission (request.userInfo)
// that is true for a request by a cluster's identity: a user in a group
// system:open-cluster-management:<cluster> other than ManagedClustersGroup.
// Bootstrap identities, hub admins and the hub's controllers are in none.
const IsClusterAgentCEL = "request.userInfo.groups.exists(g, g.startsWith('" + Prefix + "') && g != '" + ManagedClustersGroup + "')"

// RequesterClustersCEL is a CEL expression of admission: the clusters whose
// identity makes the request (the first is the agent's own cluster).
const RequesterClustersCEL = "request.userInfo.groups.filter(g, g.startsWith('" + Prefix + "') && g != '" +
	ManagedClustersGroup + "').map(g, g.substring(size('" + Prefix + "')))"

// ClusterGroup is the group of cluster c's agents.
func ClusterGroup(c string) string { return Prefix + c }

// AgentUser is the user name of agent a of cluster c.
func AgentUser(c, a string) string { return ClusterGroup(c) + ":" + a }

// AgentGroups are the groups of cluster c's agents, as a CSR's subject O.
func AgentGroups(c string) []string { return []string{ClusterGroup(c), ManagedClustersGroup} }

// ParseAgentUser splits an agent's user name into its cluster and agent id.
func ParseAgentUser(user string) (cluster, agent string, ok bool) {
	rest, ok := strings.CutPrefix(user, Prefix)
	parts := strings.Split(rest, ":")
	if !ok || len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return "", "", false
	}
	return parts[0], parts[1], true
}

// ParseCertificateRequest decodes a PEM certificate request and verifies
// its signature.
func ParseCertificateRequest(data []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("the request is not a PEM CERTIFICATE REQUEST")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("the request cannot be parsed: %w", err)
	}
	if err := req.CheckSignature(); err != nil {
		return nil, fmt.Errorf("the request has a bad signature: %w", err)
	}
	return req, nil
}

// CheckAgentSubject requires what the contract asks of an agent's
// certificate request for cluster c: CN system:open-cluster-management:<c>:<agent>,
// O exactly the agent groups of c (every O becomes a group of the
// certificate's user, so anything more would be a privilege agents do not
// have), and no subject alternative names. It returns the agent id.
func CheckAgentSubject(req *x509.CertificateRequest, c string) (string, error) {
	cn := req.Subject.CommonName
	cluster, agent, ok := ParseAgentUser(cn)
	if !ok || cluster != c {
		return "", fmt.Errorf("its subject CN %q does not name cluster %s (want %s:<agent-id>)", cn, c, ClusterGroup(c))
	}
	orgs := slices.Clone(req.Subject.Organization)
	slices.Sort(orgs)
	want := AgentGroups(c)
	slices.Sort(want)
	if !slices.Equal(slices.Compact(orgs), want) {
		return "", fmt.Errorf("its subject O %q is not exactly the agent groups %q", req.Subject.Organization, want)
	}
	if len(req.DNSNames)+len(req.EmailAddresses)+len(req.IPAddresses)+len(req.URIs) > 0 {
		return "", errors.New("it asks for subject alternative names, which agents' client certificates never have")
	}
	return agent, nil
}

// CheckClientUsages requires the key usages of a client certificate, and
// no others: digital signature and key encipherment optional, client auth
// required.
func CheckClientUsages(usages []certificatesv1.KeyUsage) error {
	for _, u := range usages {
		switch u {
		case certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth:
		default:
			return fmt.Errorf("it asks for key usage %q, beyond a client certificate's", u)
		}
	}
	if !slices.Contains(usages, certificatesv1.UsageClientAuth) {
		return errors.New("it does not ask for client auth")
	}
	return nil
}

// AcceptedAgentAnnotation on a ManagedCluster names, by its agent id, the
// one agent of the cluster that the hub grants the cluster's access: the
// agent whose join the hub accepted, or the one a hub admin accepted in
// its place (flotilla accept --replace-agent). Only the hub's side writes
// it: the hub's registration controller when a cluster's first agent is
// accepted, and users allowed to accept clusters. Agents may not change
// it, since it does not begin with their annotation prefix.
const AcceptedAgentAnnotation = "registration.flotilla.io/accepted-agent"

// AgentIDAnnotation on a ManagedCluster names, by its agent id, the agent
// that joined it last: the joining agent writes it when it creates the
// cluster, and again with its own certificate before it reports Joined.
// It has the prefix of the only annotations an agent may change, so it
// says which agent holds the cluster's credentials, never which one the
// hub grants its access (AcceptedAgentAnnotation).
const AgentIDAnnotation = "agent.open-cluster-management.io/flotilla-agent-id"

// AgentSubjects are whom cluster c's access on the hub is granted to: its
// accepted agent, by user name, once the hub has recorded one (agent, the
// value of AcceptedAgentAnnotation), so that an agent it replaced, or a
// certificate approved for another agent of the same cluster, is refused
// by RBAC itself; until then, as OCM does, the group of c's agents.
// Certificates cannot be revoked in Kubernetes: naming the user is how the
// hub stops honouring one.
func AgentSubjects(c, agent string) []rbacv1.Subject {
	if agent != "" {
		return []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: AgentUser(c, agent)}}
	}
	return []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: ClusterGroup(c)}}
}
