package registration

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/identity"
)

// The rules below are what an agent needs and no more. Everything
// namespaced is granted through RoleBindings in the cluster's namespace,
// so an agent can read nothing in another cluster's namespace.

// sharedClusterRoles are the ClusterRoles that every accepted cluster's
// RoleBindings refer to.
func sharedClusterRoles() []*rbacv1.ClusterRole {
	return []*rbacv1.ClusterRole{
		{
			ObjectMeta: metav1.ObjectMeta{Name: RegistrationClusterRole},
			Rules: []rbacv1.PolicyRule{
				// The hub creates managed-cluster-lease; agents written for OCM
				// only update it, Flotilla's may create it first.
				{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch"}},
				{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch"}},
				{APIGroups: []string{"addon.open-cluster-management.io"}, Resources: []string{"managedclusteraddons"}, Verbs: []string{"get", "list", "watch", "update", "patch"}},
				{APIGroups: []string{"addon.open-cluster-management.io"}, Resources: []string{"managedclusteraddons/status"}, Verbs: []string{"update", "patch"}},
				// The policy agent evaluates the replicated policies of its
				// cluster and reports their compliance.
				{APIGroups: []string{"policy.open-cluster-management.io"}, Resources: []string{"policies"}, Verbs: []string{"get", "list", "watch", "update", "patch"}},
				{APIGroups: []string{"policy.open-cluster-management.io"}, Resources: []string{"policies/status"}, Verbs: []string{"update", "patch"}},
				// Multi-cluster services: the agent publishes what its cluster
				// exports, one ExportedService per Service, and deletes it when
				// the export goes. Their status is the hub's verdict: no
				// exportedservices/status.
				{APIGroups: []string{mcsv1alpha1.GroupVersion.Group}, Resources: []string{"exportedservices"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
			},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Name: WorkClusterRole},
			Rules: []rbacv1.PolicyRule{
				// delete: the agent deletes a work whose ttlSecondsAfterFinished ran out.
				{APIGroups: []string{"work.open-cluster-management.io"}, Resources: []string{"manifestworks"}, Verbs: []string{"get", "list", "watch", "update", "patch", "delete"}},
				{APIGroups: []string{"work.open-cluster-management.io"}, Resources: []string{"manifestworks/status"}, Verbs: []string{"update", "patch"}},
			},
		},
	}
}

// clusterRole is cluster c's own ClusterRole: its ManagedCluster, CSRs and
// certificate renewal.
func clusterRole(c string) *rbacv1.ClusterRole {
	named := []string{c}
	return &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: ClusterRoleName(c), Labels: clusterLabels(c)},
		Rules: []rbacv1.PolicyRule{
			// list and watch are limited to the named object (a field selector on
			// metadata.name), which is how an agent watches its own cluster.
			{APIGroups: []string{clusterv1.GroupVersion.Group}, Resources: []string{"managedclusters"}, ResourceNames: named, Verbs: []string{"get", "list", "watch", "update"}},
			{APIGroups: []string{clusterv1.GroupVersion.Group}, Resources: []string{"managedclusters/status"}, ResourceNames: named, Verbs: []string{"patch", "update"}},
			{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests"}, Verbs: []string{"create", "get", "list", "watch"}},
			{APIGroups: []string{RegisterGroup}, Resources: []string{ManagedClustersResource + "/" + ClientCertificatesSubresource}, ResourceNames: named, Verbs: []string{RenewVerb}},
			// Search: the agent reads which kinds to index from the one
			// SearchConfig the hub reads (cluster-scoped, so granted here).
			{APIGroups: []string{searchv1alpha1.GroupName}, Resources: []string{"searchconfigs"}, ResourceNames: []string{searchv1alpha1.DefaultConfigName}, Verbs: []string{"get", "list", "watch"}},
		},
	}
}

// clusterRoleBinding binds cluster c's ClusterRole to its agent (see
// clusterSubjects).
func clusterRoleBinding(c, agent string) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ClusterRoleName(c), Labels: clusterLabels(c)},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ClusterRoleName(c)},
		Subjects:   clusterSubjects(c, agent),
	}
}

// roleBindings are the RoleBindings in namespace c to the shared roles.
func roleBindings(c, agent string) []*rbacv1.RoleBinding {
	return []*rbacv1.RoleBinding{registrationRoleBinding(c, agent), workRoleBinding(c, agent)}
}

func registrationRoleBinding(c, agent string) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: RegistrationRoleBindingName(c), Namespace: c, Labels: clusterLabels(c)},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: RegistrationClusterRole},
		Subjects:   clusterSubjects(c, agent),
	}
}

func workRoleBinding(c, agent string) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{
			Name: WorkRoleBindingName(c), Namespace: c, Labels: clusterLabels(c),
			Finalizers: []string{WorkRoleBindingFinalizer},
		},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: WorkClusterRole},
		Subjects: clusterSubjects(c, agent),
	}
}

// clusterSubjects are whom cluster c's access is granted to (see
// identity.AgentSubjects): the hub's services controllers bind the same.
func clusterSubjects(c, agent string) []rbacv1.Subject {
	return identity.AgentSubjects(c, agent)
}

func clusterLabels(c string) map[string]string {
	return map[string]string{clusterv1.ClusterNameLabel: c}
}
