package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/hub/bootstraptoken"
)

// flotillaTokens counts the unexpired join tokens init made on the hub
// (expired ones vanish whenever the token cleaner gets to them).
func flotillaTokens(ctx SpecContext) int {
	GinkgoHelper()
	list, err := hubCP.Kube.CoreV1().Secrets(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=flotilla"})
	Expect(err).NotTo(HaveOccurred())
	n := 0
	for _, s := range list.Items {
		if exp, err := time.Parse(time.RFC3339, string(s.Data["expiration"])); err == nil && exp.After(time.Now().Add(time.Minute)) {
			n++
		}
	}
	return n
}

func tokenSecret(ctx SpecContext, token string) *corev1.Secret {
	GinkgoHelper()
	id, _, _ := strings.Cut(token, ".")
	s, err := hubCP.Kube.CoreV1().Secrets(metav1.NamespaceSystem).Get(ctx, bootstrapapi.BootstrapTokenSecretPrefix+id, metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred())
	return s
}

var _ = Describe("CLI init", func() {
	It("creates a join token, the bootstrap RBAC and cluster-info, and changes nothing on a second run", func(ctx SpecContext) {
		By("waiting for the token the hub rotates itself, which it creates when it starts")
		// Until then init makes a token of its own, and the next init would
		// rightly hand out the hub's, which expires later.
		Eventually(func() ([]corev1.Secret, error) {
			list, err := hubCP.Kube.CoreV1().Secrets(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{LabelSelector: bootstraptoken.RotationLabel + "=" + bootstraptoken.RotationValue})
			if err != nil {
				return nil, err
			}
			return list.Items, nil
		}).ShouldNot(BeEmpty())

		By("recreating a missing cluster-info")
		Expect(hubCP.Kube.CoreV1().ConfigMaps(metav1.NamespacePublic).Delete(ctx, bootstrapapi.ConfigMapClusterInfo, metav1.DeleteOptions{})).To(Succeed())

		res := onHub(ctx, "init")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(MatchRegexp(`flotilla join --hub-token [a-z0-9]{6}\.[a-z0-9]{16} --hub-apiserver %s --cluster-name <cluster_name>`, hubCP.URL))
		Expect(res.Stdout).To(ContainSubstring("flotilla accept --clusters <cluster_name>"))
		cm, err := hubCP.Kube.CoreV1().ConfigMaps(metav1.NamespacePublic).Get(ctx, bootstrapapi.ConfigMapClusterInfo, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(cm.Data[bootstrapapi.KubeConfigKey]).To(ContainSubstring(hubCP.URL))

		token := strings.Fields(res.Stdout[strings.Index(res.Stdout, "--hub-token"):])[1]
		By("storing the token as the contract says")
		s := tokenSecret(ctx, token)
		Expect(s.Type).To(Equal(bootstrapapi.SecretTypeBootstrapToken))
		Expect(string(s.Data["usage-bootstrap-authentication"])).To(Equal("true"))
		Expect(string(s.Data["auth-extra-groups"])).To(Equal("system:bootstrappers:managedcluster"))
		_, err = time.Parse(time.RFC3339, string(s.Data["expiration"]))
		Expect(err).NotTo(HaveOccurred())

		By("granting exactly the contract's bootstrap role to the bootstrap group")
		role, err := hubCP.Kube.RbacV1().ClusterRoles().Get(ctx, "open-cluster-management:bootstrap", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(role.Rules).To(ConsistOf(
			rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}},
			rbacv1.PolicyRule{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests"}, Verbs: []string{"create", "get", "list", "watch"}},
			rbacv1.PolicyRule{APIGroups: []string{"cluster.open-cluster-management.io"}, Resources: []string{"managedclusters"}, Verbs: []string{"get", "create", "list", "watch"}},
			rbacv1.PolicyRule{APIGroups: []string{"cluster.open-cluster-management.io"}, Resources: []string{"managedclustersets/join"}, Verbs: []string{"create"}},
		))
		binding, err := hubCP.Kube.RbacV1().ClusterRoleBindings().Get(ctx, "open-cluster-management:bootstrap", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(binding.RoleRef.Name).To(Equal("open-cluster-management:bootstrap"))
		Expect(binding.Subjects).To(ConsistOf(rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "system:bootstrappers:managedcluster"}))

		By("running init again")
		tokens := flotillaTokens(ctx)
		again := onHub(ctx, "init")
		Expect(again.Code).To(Equal(0), again.Stderr)
		Expect(again.Stdout).To(ContainSubstring(token), "a valid token is reused")
		Expect(again.Stderr).To(ContainSubstring("reusing join token"))
		Expect(flotillaTokens(ctx)).To(Equal(tokens))
		role2, err := hubCP.Kube.RbacV1().ClusterRoles().Get(ctx, role.Name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(role2.ResourceVersion).To(Equal(role.ResourceVersion), "the ClusterRole is left alone")

		By("putting back rules someone widened")
		role2.Rules = append(role2.Rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"list"}})
		_, err = hubCP.Kube.RbacV1().ClusterRoles().Update(ctx, role2, metav1.UpdateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(onHub(ctx, "init").Code).To(Equal(0))
		role3, err := hubCP.Kube.RbacV1().ClusterRoles().Get(ctx, role.Name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(role3.Rules).To(Equal(role.Rules))

		By("making a new token only when asked")
		fresh := hubInit(ctx, "--new-token")
		Expect(fresh.HubToken).NotTo(Equal(token))
		Expect(flotillaTokens(ctx)).To(Equal(tokens + 1))
		// The token init reused may be the hub's own or another spec's.
		made := tokenSecret(ctx, fresh.HubToken)
		expires, err := time.Parse(time.RFC3339, string(made.Data["expiration"]))
		Expect(err).NotTo(HaveOccurred())
		Expect(expires).To(BeTemporally("~", made.CreationTimestamp.Add(24*time.Hour), time.Minute), "--token-ttl defaults to 24h")
	})

	It("prints the token and the hub address as JSON, YAML and into a file", func(ctx SpecContext) {
		res := onHub(ctx, "init", "-o", "json")
		Expect(res.Code).To(Equal(0), res.Stderr)
		var fields map[string]string
		Expect(json.Unmarshal([]byte(res.Stdout), &fields)).To(Succeed(), "stdout holds only JSON: %q", res.Stdout)
		Expect(fields).To(HaveLen(2))
		Expect(fields).To(HaveKeyWithValue("hub-apiserver", hubCP.URL))
		Expect(fields).To(HaveKeyWithValue("hub-token", MatchRegexp(`^[a-z0-9]{6}\.[a-z0-9]{16}$`)))

		yamlOut := onHub(ctx, "init", "-o", "yaml")
		Expect(yamlOut.Code).To(Equal(0))
		Expect(yamlOut.Stdout).To(Equal("hub-apiserver: " + hubCP.URL + "\nhub-token: " + fields["hub-token"] + "\n"))

		file := filepath.Join(GinkgoT().TempDir(), "join.sh")
		override := "https://hub.example.com:6443"
		res = onHub(ctx, "init", "--hub-apiserver", override, "--output-join-command-file", file)
		Expect(res.Code).To(Equal(0), res.Stderr)
		data, err := os.ReadFile(file)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(data)).To(Equal("flotilla join --hub-token " + fields["hub-token"] + " --hub-apiserver " + override + " --cluster-name <cluster_name>\n"))
		info, err := os.Stat(file)
		Expect(err).NotTo(HaveOccurred())
		Expect(info.Mode().Perm()).To(Equal(os.FileMode(0o600)), "the file holds a secret")

		By("get token printing the same")
		got := onHub(ctx, "get", "token", "-o", "json")
		Expect(got.Code).To(Equal(0), got.Stderr)
		Expect(got.Stdout).To(MatchJSON(`{"hub-token":"` + fields["hub-token"] + `","hub-apiserver":"` + hubCP.URL + `"}`))
	})

	It("gives a join token the bootstrap groups and no right beyond the bootstrap role", func(ctx SpecContext) {
		token := hubInit(ctx).HubToken
		kube, c := bootstrapClients(token)

		review, err := kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		id, _, _ := strings.Cut(token, ".")
		Expect(review.Status.UserInfo.Username).To(Equal("system:bootstrap:" + id))
		Expect(review.Status.UserInfo.Groups).To(ConsistOf("system:bootstrappers", "system:bootstrappers:managedcluster", "system:authenticated"))

		type check struct {
			attrs   authorizationv1.ResourceAttributes
			allowed bool
		}
		csrs := func(verb string) authorizationv1.ResourceAttributes {
			return authorizationv1.ResourceAttributes{Group: "certificates.k8s.io", Resource: "certificatesigningrequests", Verb: verb}
		}
		mcs := func(verb string) authorizationv1.ResourceAttributes {
			return authorizationv1.ResourceAttributes{Group: "cluster.open-cluster-management.io", Resource: "managedclusters", Verb: verb}
		}
		core := func(verb, resource, ns string) authorizationv1.ResourceAttributes {
			return authorizationv1.ResourceAttributes{Resource: resource, Verb: verb, Namespace: ns}
		}
		checks := []check{
			{core("get", "configmaps", "kube-public"), true},
			{csrs("create"), true}, {csrs("get"), true}, {csrs("list"), true}, {csrs("watch"), true},
			{mcs("create"), true}, {mcs("get"), true}, {mcs("list"), true}, {mcs("watch"), true},
			{authorizationv1.ResourceAttributes{Group: "cluster.open-cluster-management.io", Resource: "managedclustersets", Subresource: "join", Verb: "create", Name: "default"}, true},

			{core("list", "secrets", "kube-system"), false},
			{core("get", "secrets", "kube-system"), false},
			{core("list", "namespaces", ""), false},
			{core("create", "namespaces", ""), false},
			{core("list", "configmaps", "kube-public"), false},
			{core("update", "configmaps", "kube-public"), false},
			{csrs("update"), false}, {csrs("delete"), false},
			{authorizationv1.ResourceAttributes{Group: "certificates.k8s.io", Resource: "certificatesigningrequests", Subresource: "approval", Verb: "update"}, false},
			{authorizationv1.ResourceAttributes{Group: "certificates.k8s.io", Resource: "signers", Name: "kubernetes.io/kube-apiserver-client", Verb: "approve"}, false},
			{mcs("update"), false}, {mcs("patch"), false}, {mcs("delete"), false},
			{authorizationv1.ResourceAttributes{Group: "cluster.open-cluster-management.io", Resource: "managedclusters", Subresource: "status", Verb: "patch"}, false},
			{authorizationv1.ResourceAttributes{Group: "register.open-cluster-management.io", Resource: "managedclusters", Subresource: "accept", Verb: "update"}, false},
			{authorizationv1.ResourceAttributes{Group: "cluster.open-cluster-management.io", Resource: "managedclustersets", Verb: "create"}, false},
			{authorizationv1.ResourceAttributes{Group: "work.open-cluster-management.io", Resource: "manifestworks", Verb: "list", Namespace: "cluster1"}, false},
		}
		for _, chk := range checks {
			attrs := chk.attrs
			r, err := kube.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
				Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &attrs},
			}, metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
			Expect(r.Status.Allowed).To(Equal(chk.allowed), "%s %s/%s/%s in %q", attrs.Verb, attrs.Group, attrs.Resource, attrs.Subresource, attrs.Namespace)
		}

		By("doing what an agent does to join")
		createManagedCluster(ctx, c, "cli-token-rights")
		createCSR(ctx, kube, "cli-token-rights", "cli-token-rights")
		_, err = kube.CoreV1().ConfigMaps(metav1.NamespacePublic).Get(ctx, bootstrapapi.ConfigMapClusterInfo, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())

		By("being refused everything else")
		_, err = kube.CoreV1().Secrets(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "list secrets: %v", err)
		_, err = kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "list namespaces: %v", err)
		err = c.Patch(ctx, newManagedCluster("cli-token-rights"), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"hubAcceptsClient":true}}`)))
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "accept itself: %v", err)
	})

	It("makes the hub refuse an expired or a deleted token", func(ctx SpecContext) {
		expired := hubInit(ctx, "--new-token").HubToken
		deleted := hubInit(ctx, "--new-token").HubToken
		for _, tok := range []string{expired, deleted} {
			Expect(whoAmI(ctx, hubCP.ConfigFor(nil, nil, tok)).Groups).To(ContainElement("system:bootstrappers:managedcluster"))
		}

		s := tokenSecret(ctx, expired)
		s.Data["expiration"] = []byte(time.Now().Add(-time.Minute).UTC().Format(time.RFC3339))
		_, err := hubCP.Kube.CoreV1().Secrets(metav1.NamespaceSystem).Update(ctx, s, metav1.UpdateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(hubCP.Kube.CoreV1().Secrets(metav1.NamespaceSystem).Delete(ctx, tokenSecret(ctx, deleted).Name, metav1.DeleteOptions{})).To(Succeed())

		for _, tok := range []string{expired, deleted} {
			kube := kubernetes.NewForConfigOrDie(hubCP.ConfigFor(nil, nil, tok))
			Eventually(func() error {
				_, err := kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
				return err
			}).Should(Satisfy(apierrors.IsUnauthorized), "token %s", tok)
		}
	})

	It("says what is wrong with its flags and kubeconfig", func(ctx SpecContext) {
		res := onHub(ctx, "init", "--token-ttl", "0s")
		Expect(res.Code).NotTo(Equal(0))
		Expect(res.Stderr).To(ContainSubstring("--token-ttl 0s must be positive"))

		res = onHub(ctx, "init", "-o", "table")
		Expect(res.Code).NotTo(Equal(0))
		Expect(res.Stderr).To(ContainSubstring(`--output "table" is not supported`))

		res = onHub(ctx, "init", "--hub-apiserver", "hub:6443")
		Expect(res.Code).NotTo(Equal(0))
		Expect(res.Stderr).To(ContainSubstring("not an https:// URL"))

		missing := filepath.Join(GinkgoT().TempDir(), "nope.kubeconfig")
		res = flotilla(ctx, "init", "--kubeconfig", missing)
		Expect(res.Code).NotTo(Equal(0))
		Expect(res.Stderr).To(ContainSubstring("--kubeconfig " + missing))
		Expect(res.Stderr).NotTo(ContainSubstring("goroutine"), "no stack traces")
	})
})
