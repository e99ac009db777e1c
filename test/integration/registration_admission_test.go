package integration

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/hub/registration"
	"github.com/flotilla-io/flotilla/internal/identity"
)

// grant binds a new ClusterRole with rules to subject for the rest of the spec.
func grant(ctx SpecContext, subject rbacv1.Subject, rules ...rbacv1.PolicyRule) {
	GinkgoHelper()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-grant-"}, Rules: rules}
	Expect(hubCP.Client.Create(ctx, role)).To(Succeed())
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{subject},
	}
	Expect(hubCP.Client.Create(ctx, binding)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) {
		Expect(client.IgnoreNotFound(hubCP.Client.Delete(ctx, binding))).To(Succeed())
		Expect(client.IgnoreNotFound(hubCP.Client.Delete(ctx, role))).To(Succeed())
	})
	// The API server's RBAC authorizer reads roles from an informer: wait
	// until it allows every rule, so the spec never races the grant.
	for _, attrs := range ruleAttributes(rules) {
		Eventually(func() bool { return allowed(ctx, subject, attrs) }).Should(BeTrue(), "grant of %+v to %s", attrs, subject.Name)
	}
}

// ruleAttributes lists one access check for each verb, resource and
// resource name of rules.
func ruleAttributes(rules []rbacv1.PolicyRule) []authorizationv1.ResourceAttributes {
	var all []authorizationv1.ResourceAttributes
	for _, r := range rules {
		names := r.ResourceNames
		if len(names) == 0 {
			names = []string{""}
		}
		for _, group := range r.APIGroups {
			for _, resource := range r.Resources {
				res, sub, _ := strings.Cut(resource, "/")
				for _, verb := range r.Verbs {
					for _, name := range names {
						all = append(all, authorizationv1.ResourceAttributes{Group: group, Resource: res, Subresource: sub, Verb: verb, Name: name})
					}
				}
			}
		}
	}
	return all
}

// allowed asks the hub whether subject (a user or a group) may do attrs.
func allowed(ctx SpecContext, subject rbacv1.Subject, attrs authorizationv1.ResourceAttributes) bool {
	spec := authorizationv1.SubjectAccessReviewSpec{ResourceAttributes: &attrs, User: subject.Name}
	switch subject.Kind {
	case rbacv1.GroupKind:
		spec.User, spec.Groups = "grant-check", []string{subject.Name}
	case rbacv1.ServiceAccountKind:
		spec.User = "system:serviceaccount:" + subject.Namespace + ":" + subject.Name
	}
	review := &authorizationv1.SubjectAccessReview{Spec: spec}
	Expect(hubCP.Client.Create(ctx, review)).To(Succeed())
	return review.Status.Allowed
}

// impersonating is a client acting as user (the hub admin may impersonate).
func impersonating(user string) client.Client {
	cfg := rest.CopyConfig(hubCP.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	return crClient(cfg)
}

var (
	editClusters = rbacv1.PolicyRule{APIGroups: []string{clusterv1.GroupVersion.Group}, Resources: []string{"managedclusters"}, Verbs: []string{"create", "get", "update", "patch"}}
	acceptAny    = rbacv1.PolicyRule{APIGroups: []string{registration.RegisterGroup}, Resources: []string{"managedclusters/accept"}, Verbs: []string{"update"}}
)

var _ = Describe("Registration: admission of hubAcceptsClient", func() {
	missingPermission := ContainSubstring("update managedclusters/accept in API group register.open-cluster-management.io")

	It("lets only users allowed to update managedclusters/accept set hubAcceptsClient", func(ctx SpecContext) {
		editor, acceptor := newClusterName("editor"), newClusterName("acceptor")
		grant(ctx, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: editor}, editClusters)
		grant(ctx, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: acceptor}, editClusters, acceptAny)
		asEditor, asAcceptor := impersonating(editor), impersonating(acceptor)

		By("refusing an editor to create an accepted cluster, saying which permission is missing")
		c := newClusterName("adm")
		accepted := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: c}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}}
		Eventually(func() error { return asEditor.Create(ctx, accepted.DeepCopy(), client.DryRunAll) }).Should(And(beForbidden(), MatchError(missingPermission)))
		Expect(asEditor.Create(ctx, accepted.DeepCopy())).To(And(beForbidden(), MatchError(missingPermission)))

		By("letting the editor create it unaccepted and edit it, but not accept it")
		Expect(asEditor.Create(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: c}})).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			Expect(client.IgnoreNotFound(hubCP.Client.Delete(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: c}}))).To(Succeed())
		})
		Expect(updateCluster(ctx, asEditor, c, func(mc *clusterv1.ManagedCluster) { mc.Labels = map[string]string{"edited": "yes"} })).To(Succeed())
		accept := func(mc *clusterv1.ManagedCluster) { mc.Spec.HubAcceptsClient = true }
		Expect(updateCluster(ctx, asEditor, c, accept)).To(And(beForbidden(), MatchError(missingPermission)))
		Expect(getCluster(ctx, c).Spec.HubAcceptsClient).To(BeFalse())

		By("letting a user with managedclusters/accept accept it, and create accepted clusters")
		Expect(updateCluster(ctx, asAcceptor, c, accept)).To(Succeed())
		Eventually(clusterCondition(ctx, c, clusterv1.ManagedClusterConditionHubAccepted)).Should(HaveField("Status", metav1.ConditionTrue))
		other := newClusterName("adm")
		Expect(asAcceptor.Create(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: other}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}})).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			Expect(client.IgnoreNotFound(hubCP.Client.Delete(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: other}}))).To(Succeed())
		})
	})

	It("does not let a cluster's agent accept its own cluster", func(ctx SpecContext) {
		c := newClusterName("self")
		createCluster(ctx, c)
		agent := crClient(agentConfig(ctx, c, "agent1"))
		// What acceptance grants an agent on its ManagedCluster, granted here
		// without acceptance.
		grant(ctx, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: identity.ClusterGroup(c)},
			rbacv1.PolicyRule{APIGroups: []string{clusterv1.GroupVersion.Group}, Resources: []string{"managedclusters"}, ResourceNames: []string{c}, Verbs: []string{"get", "update"}})

		By("letting the agent update what an agent may on its ManagedCluster (so that the refusal below is a policy's, not RBAC's)")
		Eventually(func() error {
			return updateCluster(ctx, agent, c, func(mc *clusterv1.ManagedCluster) {
				metav1.SetMetaDataAnnotation(&mc.ObjectMeta, "agent.open-cluster-management.io/was-here", "yes")
			})
		}).Should(Succeed())

		By("refusing it hubAcceptsClient: true, by the accept policy or by the one that keeps agents off their cluster's spec")
		Expect(updateCluster(ctx, agent, c, func(mc *clusterv1.ManagedCluster) { mc.Spec.HubAcceptsClient = true })).
			To(And(beForbidden(), Or(MatchError(missingPermission), MatchError(ContainSubstring("spec.hubAcceptsClient")))))
		Expect(getCluster(ctx, c).Spec.HubAcceptsClient).To(BeFalse())
	})
})
