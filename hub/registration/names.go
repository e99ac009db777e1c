package registration

// Identities and RBAC names of the registration protocol.
const (
	// RegistrationClusterRole is the shared ClusterRole that every accepted
	// cluster is bound to in its namespace: leases, events, addons.
	RegistrationClusterRole = "open-cluster-management:managedcluster:registration"
	// WorkClusterRole is the shared ClusterRole that lets an agent read and
	// update the ManifestWorks in its namespace.
	WorkClusterRole = "open-cluster-management:managedcluster:work"
	// ClusterFinalizer holds a ManagedCluster until the hub removed what it
	// created for the cluster.
	ClusterFinalizer = "cluster.open-cluster-management.io/api-resource-cleanup"
	// WorkRoleBindingFinalizer keeps the agent's access to its ManifestWorks
	// until they are gone, so that their finalizers can run.
	WorkRoleBindingFinalizer = "cluster.open-cluster-management.io/manifest-work-cleanup"
)

// The virtual resources that the protocol authorizes against.
const (
	// RegisterGroup is the API group of the virtual resources below; no
	// server serves it, RBAC and SubjectAccessReviews name it.
	RegisterGroup = "register.open-cluster-management.io"
	// ManagedClustersResource is the resource of both virtual subresources.
	ManagedClustersResource = "managedclusters"
	// AcceptSubresource: update on it allows setting spec.hubAcceptsClient.
	AcceptSubresource = "accept"
	// ClientCertificatesSubresource: renew on it allows an agent's renewal
	// CSR to be approved by the hub.
	ClientCertificatesSubresource = "clientcertificates"
	// RenewVerb is the verb of certificate renewal.
	RenewVerb = "renew"
)

// Admission objects installed by Install.
const (
	// AcceptPolicyName names the ValidatingAdmissionPolicy and its binding
	// that guard spec.hubAcceptsClient.
	AcceptPolicyName = "flotilla-managedcluster-accept"
	// AgentClusterPolicyName names the policy, and its binding, that keep
	// a cluster's agent from changing its ManagedCluster beyond its status.
	AgentClusterPolicyName = "flotilla-managedcluster-agent"
	// AgentCSRPolicyName names the policy, and its binding, that let a
	// cluster's agent create CSRs only for its own cluster.
	AgentCSRPolicyName = "flotilla-csr-agent"
	// AgentWorkPolicyName names the policy, and its binding, that keep a
	// cluster's agent to the status and its finalizer of its ManifestWorks.
	AgentWorkPolicyName = "flotilla-manifestwork-agent"
)

// Event reasons.
const (
	reasonClusterAccepted      = "ManagedClusterAccepted"
	reasonClusterDenied        = "ManagedClusterDenied"
	reasonAvailableUnknown     = "AvailableUnknown"
	reasonTaintsUpdated        = "ManagedClusterTaintsUpdated"
	reasonCSRAutoApproved      = "ManagedClusterCSRAutoApproved"
	reasonAgentNotAccepted     = "ManagedClusterAgentNotAccepted"
	reasonInvalidClusterName   = "InvalidClusterName"
	csrApprovalConditionReason = "AutoApprovedByHubCSRApprovingController"
)

// ClusterRoleName names cluster c's ClusterRole and ClusterRoleBinding.
func ClusterRoleName(c string) string { return "open-cluster-management:managedcluster:" + c }

// RegistrationRoleBindingName names the RoleBinding in namespace c to RegistrationClusterRole.
func RegistrationRoleBindingName(c string) string { return ClusterRoleName(c) + ":registration" }

// WorkRoleBindingName names the RoleBinding in namespace c to WorkClusterRole.
func WorkRoleBindingName(c string) string { return ClusterRoleName(c) + ":work" }
