package bootstraptoken

import (
	certificatesv1 "k8s.io/api/certificates/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
)

// ClusterRole allows exactly what an agent needs before it is accepted:
// read cluster-info, create and follow its CSR, create and read its
// ManagedCluster, and join a cluster set when creating it.
func ClusterRole() *rbacv1.ClusterRole {
	cluster := clusterv1.GroupVersion.Group
	return &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: ClusterRoleName, Labels: managedBy()},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}},
			{APIGroups: []string{certificatesv1.GroupName}, Resources: []string{"certificatesigningrequests"}, Verbs: []string{"create", "get", "list", "watch"}},
			{APIGroups: []string{cluster}, Resources: []string{"managedclusters"}, Verbs: []string{"get", "create", "list", "watch"}},
			{APIGroups: []string{cluster}, Resources: []string{"managedclustersets/join"}, Verbs: []string{"create"}},
		},
	}
}

// GroupBinding grants ClusterRole to every bootstrap token.
func GroupBinding() *rbacv1.ClusterRoleBinding {
	return binding(ClusterRoleName, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: Group})
}

// ServiceAccountBinding grants ClusterRole to the bootstrap ServiceAccount.
func ServiceAccountBinding() *rbacv1.ClusterRoleBinding {
	return binding(ServiceAccountName, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: Namespace, Name: ServiceAccountName})
}

func binding(name string, subject rbacv1.Subject) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: managedBy()},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ClusterRoleName},
		Subjects:   []rbacv1.Subject{subject},
	}
}

func managedBy() map[string]string { return map[string]string{ManagedByLabel: ManagedByValue} }
