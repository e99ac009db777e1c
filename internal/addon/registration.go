package addon

import "strings"

// Names of an add-on agent's registration (docs/addons.md, section 5).
const (
	// KubeClientDriverCSR is the driver an agent that asks for certificates
	// with CSRs writes into kubeClient registrations.
	KubeClientDriverCSR = "csr"
	// HealthCheckModeLease and HealthCheckModeCustomized are the values of
	// status.healthCheck.mode: the agent reports Available from the
	// add-on's Lease, or the add-on's manager does.
	HealthCheckModeLease      = "Lease"
	HealthCheckModeCustomized = "Customized"
	// AddOnDNSSuffix makes the DNS SAN of an add-on's CSRs: <addon>.AddOnDNSSuffix.
	AddOnDNSSuffix = "addon.open-cluster-management.io"
	// AuthenticatedGroup is the group that old texts add to an add-on
	// agent's default subject.
	AuthenticatedGroup = "system:authenticated"
	// MaxCSRs is how many CSRs of one cluster's add-on, in any state, an
	// agent tolerates on the hub before it stops creating more.
	MaxCSRs = 10
)

// Reasons and messages of the agent's conditions.
const (
	ReasonClientCertificateUpdated      = "ClientCertificateUpdated"
	ReasonClientCertificateUpdateFailed = "ClientCertificateUpdateFailed"
	MessageTooManyCSRs                  = "Stop creating csr since there are too many csr created already on hub"

	ReasonLeaseUpdated       = "ManagedClusterAddOnLeaseUpdated"
	ReasonLeaseUpdateStopped = "ManagedClusterAddOnLeaseUpdateStopped"
	ReasonLeaseNotFound      = "ManagedClusterAddOnLeaseNotFound"
)

// The hub's approval of an add-on agent's CSR.
const (
	ReasonCSRAutoApproved  = "AutoApprovedByHubCSRApprovingController"
	MessageCSRAutoApproved = "Auto approving addon agent certificate."
)

const (
	addOnGroupPrefix          = "system:open-cluster-management:addon:"
	clusterAddOnUserPrefix    = "system:open-cluster-management:cluster:"
	clusterAddOnUserSeparator = ":addon:"
)

// AddOnGroup is the group of add-on a's agents in every cluster.
func AddOnGroup(a string) string { return addOnGroupPrefix + a }

// ParseAgentUser splits the user of an add-on's agent,
// system:open-cluster-management:cluster:<c>:addon:<a>:agent:<agent>, into
// its cluster, add-on and agent name.
func ParseAgentUser(user string) (cluster, addon, agent string, ok bool) {
	rest, ok := strings.CutPrefix(user, clusterAddOnUserPrefix)
	parts := strings.Split(rest, ":")
	if !ok || len(parts) != 5 || parts[1] != "addon" || parts[3] != "agent" || parts[0] == "" || parts[2] == "" || parts[4] == "" {
		return "", "", "", false
	}
	return parts[0], parts[2], parts[4], true
}

// ParseClusterAddOnGroup splits add-on a's group in cluster c,
// system:open-cluster-management:cluster:<c>:addon:<a>.
func ParseClusterAddOnGroup(group string) (cluster, addon string, ok bool) {
	rest, ok := strings.CutPrefix(group, clusterAddOnUserPrefix)
	c, a, found := strings.Cut(rest, clusterAddOnUserSeparator)
	if !ok || !found || c == "" || a == "" || strings.Contains(c, ":") || strings.Contains(a, ":") {
		return "", "", false
	}
	return c, a, true
}

// ParseAddOnGroup returns the add-on of AddOnGroup(a).
func ParseAddOnGroup(group string) (addon string, ok bool) {
	a, ok := strings.CutPrefix(group, addOnGroupPrefix)
	return a, ok && a != "" && !strings.Contains(a, ":")
}

// LeaseAvailableMessage is the message of lease-based Available=True.
func LeaseAvailableMessage(a string) string { return a + " add-on is available." }

// LeaseUnavailableMessage is the message of lease-based Available=False.
func LeaseUnavailableMessage(a string) string { return a + " add-on is not available." }

// LeaseUnknownMessage is the message of lease-based Available=Unknown.
func LeaseUnknownMessage(a string) string { return "The status of " + a + " add-on is unknown." }
