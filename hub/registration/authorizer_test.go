package registration

import (
	"context"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/hub/bootstraptoken"
	"github.com/flotilla-io/flotilla/internal/identity"
)

// TestAuthorizer checks that the authorizer allows what the bindings of a
// user and its groups allow, refuses agents what they do not, and leaves
// other users' remaining requests to RBAC.
func TestAuthorizer(t *testing.T) {
	objs := []runtime.Object{clusterRole("c1"), clusterRoleBinding("c1", ""), clusterRole("c2"), clusterRoleBinding("c2", "")}
	for _, r := range sharedClusterRoles() {
		objs = append(objs, r)
	}
	for _, rb := range append(roleBindings("c1", ""), roleBindings("c2", "")...) {
		objs = append(objs, rb)
	}
	// A binding of c3 that does not name c3's group, and one that grants
	// every cluster's agents something through a shared group.
	tampered := clusterRoleBinding("c3", "")
	tampered.Subjects = clusterSubjects("other", "")
	objs = append(objs, clusterRole("c3"), tampered,
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "all-agents"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "all-agents"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "all-agents"},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: identity.ManagedClustersGroup}}})

	// Bindings of a group and of a service account, to read secrets.
	objs = append(objs, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "secret-reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}}}})
	for name, s := range map[string]rbacv1.Subject{
		"admins-read": {APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "admins"},
		"ops-read":    {Kind: rbacv1.ServiceAccountKind, Namespace: "ops", Name: "reader"},
	} {
		objs = append(objs, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "secret-reader"},
			Subjects: []rbacv1.Subject{s}})
	}

	objs = append(objs, bootstraptoken.ClusterRole(), bootstraptoken.GroupBinding())
	for _, c := range []string{"c1", "c2"} {
		objs = append(objs, &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{
			Name: c + "-csr", Labels: map[string]string{clusterv1.ClusterNameLabel: c}}})
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	factory := informers.NewSharedInformerFactory(fake.NewClientset(objs...), 0)
	a := NewAuthorizer(factory)
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("informer of %v did not sync", typ)
		}
	}

	agent := func(c string) user.Info {
		return &user.DefaultInfo{Name: identity.AgentUser(c, "a1"), Groups: append(identity.AgentGroups(c), user.AllAuthenticated)}
	}
	admin := &user.DefaultInfo{Name: "admin", Groups: []string{"admins"}}
	master := agent("c1")
	master.(*user.DefaultInfo).Groups = append(master.GetGroups(), user.SystemPrivilegedGroup)
	joining := &user.DefaultInfo{Name: "system:bootstrap:abcdef", Groups: []string{bootstraptoken.Group, "system:bootstrappers", user.AllAuthenticated}}
	for _, tc := range []struct {
		name  string
		attrs authorizer.AttributesRecord
		want  authorizer.Decision
	}{
		{"own cluster, through its ClusterRoleBinding",
			res(agent("c1"), "get", "cluster.open-cluster-management.io", "managedclusters", "", "", "c1"), authorizer.DecisionAllow},
		{"own cluster's status",
			res(agent("c1"), "patch", "cluster.open-cluster-management.io", "managedclusters", "status", "", "c1"), authorizer.DecisionAllow},
		{"another cluster",
			res(agent("c1"), "get", "cluster.open-cluster-management.io", "managedclusters", "", "", "c2"), authorizer.DecisionDeny},
		{"a verb its ClusterRole lacks",
			res(agent("c1"), "delete", "cluster.open-cluster-management.io", "managedclusters", "", "", "c1"), authorizer.DecisionDeny},
		{"an agent that is also in system:masters: left to the authorizers after",
			res(master, "delete", "cluster.open-cluster-management.io", "managedclusters", "", "", "c1"), authorizer.DecisionNoOpinion},
		{"own namespace, through a RoleBinding",
			res(agent("c1"), "update", "work.open-cluster-management.io", "manifestworks", "status", "c1", "w"), authorizer.DecisionAllow},
		{"own namespace's leases",
			res(agent("c1"), "update", "coordination.k8s.io", "leases", "", "c1", "managed-cluster-lease"), authorizer.DecisionAllow},
		{"another cluster's namespace",
			res(agent("c1"), "list", "work.open-cluster-management.io", "manifestworks", "", "c2", ""), authorizer.DecisionDeny},
		{"a binding of the group every cluster's agent is in",
			res(agent("c1"), "get", "", "configmaps", "", "c1", "x"), authorizer.DecisionAllow},
		{"a cluster's binding that does not name its group",
			res(agent("c3"), "get", "cluster.open-cluster-management.io", "managedclusters", "", "", "c3"), authorizer.DecisionDeny},
		{"the user a cluster's binding names instead",
			res(&user.DefaultInfo{Name: "someone", Groups: []string{identity.Prefix + "other"}}, "get", "cluster.open-cluster-management.io", "managedclusters", "", "", "c3"), authorizer.DecisionAllow},
		{"own cluster's CSRs, listed with its label selector",
			selected(res(agent("c1"), "list", "certificates.k8s.io", "certificatesigningrequests", "", "", ""), selection.Equals, "c1"), authorizer.DecisionAllow},
		{"own cluster's CSRs, watched with an in selector",
			selected(res(agent("c1"), "watch", "certificates.k8s.io", "certificatesigningrequests", "", "", ""), selection.In, "c1"), authorizer.DecisionAllow},
		{"another cluster's CSRs, listed with its label selector",
			selected(res(agent("c1"), "list", "certificates.k8s.io", "certificatesigningrequests", "", "", ""), selection.Equals, "c2"), authorizer.DecisionDeny},
		{"own and another cluster's CSRs",
			selected(res(agent("c1"), "list", "certificates.k8s.io", "certificatesigningrequests", "", "", ""), selection.In, "c1", "c2"), authorizer.DecisionDeny},
		{"every CSR, unselected",
			res(agent("c1"), "list", "certificates.k8s.io", "certificatesigningrequests", "", "", ""), authorizer.DecisionDeny},
		{"every CSR, watched unselected",
			res(agent("c1"), "watch", "certificates.k8s.io", "certificatesigningrequests", "", "", ""), authorizer.DecisionDeny},
		{"a CSR by name, with another cluster's label selector",
			selected(res(agent("c1"), "watch", "certificates.k8s.io", "certificatesigningrequests", "", "", "c2-csr"), selection.Equals, "c2"), authorizer.DecisionDeny},
		{"own cluster's CSR by name",
			res(agent("c1"), "get", "certificates.k8s.io", "certificatesigningrequests", "", "", "c1-csr"), authorizer.DecisionAllow},
		{"another cluster's CSR by name",
			res(agent("c1"), "get", "certificates.k8s.io", "certificatesigningrequests", "", "", "c2-csr"), authorizer.DecisionDeny},
		{"a CSR that does not exist",
			res(agent("c1"), "get", "certificates.k8s.io", "certificatesigningrequests", "", "", "nothing"), authorizer.DecisionDeny},
		{"creating a CSR: left to RBAC and admission",
			res(agent("c1"), "create", "certificates.k8s.io", "certificatesigningrequests", "", "", ""), authorizer.DecisionAllow},
		{"every CSR, by a user of no cluster: left to RBAC",
			res(admin, "list", "certificates.k8s.io", "certificatesigningrequests", "", "", ""), authorizer.DecisionNoOpinion},
		{"a user of no cluster",
			res(admin, "get", "cluster.open-cluster-management.io", "managedclusters", "", "", "c1"), authorizer.DecisionNoOpinion},
		{"a user of no cluster, through a binding of its group",
			res(admin, "get", "", "secrets", "", "kube-system", "x"), authorizer.DecisionAllow},
		{"a service account, through a binding that names it",
			res(&user.DefaultInfo{Name: "system:serviceaccount:ops:reader"}, "get", "", "secrets", "", "kube-system", "x"), authorizer.DecisionAllow},
		{"a service account of another namespace, of the same name",
			res(&user.DefaultInfo{Name: "system:serviceaccount:dev:reader"}, "get", "", "secrets", "", "kube-system", "x"), authorizer.DecisionNoOpinion},
		{"a joining agent creates its ManagedCluster, through the bootstrap group's binding",
			res(joining, "create", "cluster.open-cluster-management.io", "managedclusters", "", "", ""), authorizer.DecisionAllow},
		{"a joining agent watches CSRs, through the bootstrap group's binding",
			res(joining, "watch", "certificates.k8s.io", "certificatesigningrequests", "", "", ""), authorizer.DecisionAllow},
		{"a joining agent deletes a ManagedCluster: left to RBAC",
			res(joining, "delete", "cluster.open-cluster-management.io", "managedclusters", "", "", "c1"), authorizer.DecisionDeny},
		{"a joining agent reads a cluster's works",
			res(joining, "list", "work.open-cluster-management.io", "manifestworks", "", "c1", ""), authorizer.DecisionDeny},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, reason, err := a.Authorize(ctx, tc.attrs)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("decision %v (%q), want %v", got, reason, tc.want)
			}
		})
	}
}

func res(u user.Info, verb, group, resource, sub, ns, name string) authorizer.AttributesRecord {
	return authorizer.AttributesRecord{User: u, Verb: verb, APIGroup: group, APIVersion: "*", Resource: resource,
		Subresource: sub, Namespace: ns, Name: name, ResourceRequest: true}
}

// selected adds a label selector on the cluster-name label to attrs.
func selected(attrs authorizer.AttributesRecord, op selection.Operator, values ...string) authorizer.AttributesRecord {
	r, err := labels.NewRequirement(clusterv1.ClusterNameLabel, op, values)
	if err != nil {
		panic(err)
	}
	attrs.LabelSelectorRequirements = labels.Requirements{*r}
	return attrs
}

// TestSubjectBindingsWithoutIndex checks that without the subject index
// every ClusterRoleBinding is listed, as RBAC lists them, not none.
func TestSubjectBindingsWithoutIndex(t *testing.T) {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, c := range []string{"c1", "c2"} {
		if err := indexer.Add(clusterRoleBinding(c, "")); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.WithValue(t.Context(), userKey{}, &user.DefaultInfo{Name: "someone"})
	got, err := subjectBindings{indexer}.ListClusterRoleBindings(ctx)
	if err != nil || len(got) != 2 {
		t.Errorf("got %d bindings (%v), want both", len(got), err)
	}
}
