package integration

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/agent"
	addonagent "github.com/flotilla-io/flotilla/agent/addon"
	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/deploy"
	"github.com/flotilla-io/flotilla/internal/addon"
)

// An agent started without --addon-install-namespaces (flotilla join
// --run, flotilla dev) may register an add-on in any namespace, yet lists
// Secrets only in the namespaces its add-ons use: these specs run it as the
// agent chart's ServiceAccount, which may touch Secrets in the default
// add-on namespace alone, plus a namespace its administrator granted, and
// nowhere else.
var _ = Describe("addon registration without install namespaces", Ordered, func() {
	const (
		// granted is a namespace an add-on is installed in that the
		// cluster's administrator let the agent write Secrets in.
		granted = "scoped-granted"
		// unused is a namespace no add-on uses, where the agent may not
		// touch Secrets.
		unused = "scoped-unused"
	)
	var (
		env     *agentEnv
		c       string
		opts    agent.Options
		running *runningAgent
		asAgent kubernetes.Interface
	)

	BeforeAll(func(ctx SpecContext) {
		env = newAgentEnv(ctx)
		c = newClusterName("addon-scope")
		opts = env.options(c)
		By("installing the agent chart's identity: its own namespace, the default add-on namespace, a narrow execution role")
		objs, err := deploy.Render(deploy.AgentChart, opts.Namespace, map[string]any{
			"clusterName":     c,
			"createNamespace": true,
			"bootstrap":       map[string]any{"create": false},
			"execution": map[string]any{"rules": []any{map[string]any{
				"apiGroups": []any{""}, "resources": []any{"configmaps"}, "verbs": []any{"get", "list", "watch"},
			}}},
		})
		Expect(err).NotTo(HaveOccurred())
		var identity []*unstructured.Unstructured
		for _, o := range objs {
			if o.GetKind() != "Deployment" {
				identity = append(identity, o)
			}
		}
		applyRendered(ctx, env.spoke.Client, identity)
		env.storeBootstrapSecret(ctx, opts.Namespace, bootstrapKubeconfig(hubCP.URL, hubCP.CAData, env.token))
		for _, ns := range []string{granted, unused} {
			createAddOnNamespace(ctx, env, ns)
		}
		grantAddOnSecrets(ctx, env, granted, opts.Namespace)

		kubeconfig := serviceAccountKubeconfig(ctx, env.spoke, opts.Namespace, "flotilla-agent")
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		Expect(err).NotTo(HaveOccurred())
		asAgent = kubernetes.NewForConfigOrDie(cfg)
		opts.SpokeKubeconfig = kubeconfig
		opts.AddOnInstallNamespaces = nil
		opts.AddOnLeaseCheckInterval = time.Second
		deleteClusterAfterSpec(c)
		running = startAgentUnmanaged(opts)
		DeferCleanup(func() { running.stop() })
		acceptAgent(ctx, c)
		Eventually(clusterCondition(ctx, c, clusterv1.ManagedClusterConditionJoined), "60s").Should(HaveField("Status", metav1.ConditionTrue))
	})

	It("is refused Secrets cluster-wide and where no add-on is granted, and registers add-ons in the default namespace and one granted to it", func(ctx SpecContext) {
		By("the agent's identity may not list Secrets cluster-wide, nor in a namespace no add-on uses")
		_, err := asAgent.CoreV1().Secrets(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "listing Secrets cluster-wide: %v", err)
		_, err = asAgent.CoreV1().Secrets(unused).List(ctx, metav1.ListOptions{})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "listing Secrets in %s: %v", unused, err)
		_, err = asAgent.CoreV1().Secrets(granted).List(ctx, metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred(), "the grant of %s", granted)

		By("registering an add-on in the default namespace and one in the granted namespace")
		inDefault, inGranted := newClusterName("scope-d"), newClusterName("scope-g")
		users := map[string]string{}
		for a, ns := range map[string]string{inDefault: addon.DefaultInstallNamespace, inGranted: granted} {
			users[a] = registerSelfManagedAddOn(ctx, env, c, a, ns)
		}
		cm := &corev1.ConfigMap{}
		Expect(env.spoke.Client.Get(ctx, client.ObjectKey{Namespace: opts.Namespace, Name: addonagent.RecordConfigMapName}, cm)).To(Succeed())
		Expect(cm.Data).To(HaveKey(granted), "the agent records where it wrote an add-on's Secret")
		Expect(cm.Data).NotTo(HaveKey(addon.DefaultInstallNamespace), "the default namespace is always looked at")

		By("refusing, with what to grant, an add-on installed where the agent may not write")
		denied := newClusterName("scope-u")
		declareSelfManagedAddOn(ctx, c, denied, unused)
		Eventually(func() *metav1.Condition {
			return meta.FindStatusCondition(getMCA(ctx, c, denied).Status.Conditions, addon.ConditionClusterCertificateRotated)
		}).Should(And(Not(BeNil()), HaveField("Status", metav1.ConditionFalse), HaveField("Reason", addon.ReasonClientCertificateUpdateFailed),
			HaveField("Message", ContainSubstring("may not read Secrets in the add-on's install namespace "+unused))))
		Expect(addOnCSRs(ctx, c, denied)).To(BeEmpty(), "asked for a certificate it cannot keep")

		By("deleting an add-on's Secret once it is gone, in the default namespace and in the granted one")
		for a, ns := range map[string]string{inDefault: addon.DefaultInstallNamespace, inGranted: granted} {
			Expect(hubCP.Client.Delete(ctx, getMCA(ctx, c, a))).To(Succeed())
			Eventually(func() bool {
				_, err := env.spoke.Kube.CoreV1().Secrets(ns).Get(ctx, a+"-hub-kubeconfig", metav1.GetOptions{})
				return apierrors.IsNotFound(err)
			}).Should(BeTrue(), "Secret %s/%s-hub-kubeconfig of user %s", ns, a, users[a])
		}
		Expect(running.logs.matching("list the add-on's Secrets")).To(BeEmpty(), "the agent could not look for the add-ons' Secrets")
	})

	It("deletes, when it starts, the Secrets of an add-on that went while it was stopped, from a namespace no add-on uses any more", func(ctx SpecContext) {
		a := newClusterName("scope-away")
		registerSelfManagedAddOn(ctx, env, c, a, granted)
		running.stop()
		Expect(hubCP.Client.Delete(ctx, getMCA(ctx, c, a))).To(Succeed())
		Eventually(exists(ctx, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: c, Name: a}})).Should(BeFalse())
		running = startAgentUnmanaged(opts)
		Eventually(func() bool {
			_, err := env.spoke.Kube.CoreV1().Secrets(granted).Get(ctx, a+"-hub-kubeconfig", metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		}, "60s").Should(BeTrue())
	})
})

// declareSelfManagedAddOn makes add-on a, which runs its own manager (the
// test), and enables it on cluster c in namespace ns with a kubeClient
// registration, as its manager would.
func declareSelfManagedAddOn(ctx SpecContext, c, a, ns string) addonv1alpha1.Subject {
	GinkgoHelper()
	Expect(hubCP.Client.Create(ctx, &addonv1alpha1.ClusterManagementAddOn{
		ObjectMeta: metav1.ObjectMeta{Name: a, Annotations: map[string]string{addon.LifecycleAnnotation: addon.LifecycleSelf}},
	})).To(Succeed())
	DeferCleanup(deleteHubObject, &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: a}})
	createMCA(ctx, c, a, ns)
	subject := addonv1alpha1.Subject{User: addon.AgentUser(c, a, "agent"), Groups: addon.AgentGroups(c, a)}
	writeAddOnManagerStatus(ctx, c, a, ns, addonv1alpha1.RegistrationConfig{SignerName: addon.KubeAPIServerClientSigner, Subject: subject})
	return subject
}

// registerSelfManagedAddOn declares add-on a in namespace ns, approves its
// CSR as its manager and waits for its hub kubeconfig; it returns the
// add-on agent's user.
func registerSelfManagedAddOn(ctx SpecContext, env *agentEnv, c, a, ns string) string {
	GinkgoHelper()
	subject := declareSelfManagedAddOn(ctx, c, a, ns)
	Eventually(func() []certificatesv1.CertificateSigningRequest { return addOnCSRs(ctx, c, a) }).Should(HaveLen(1))
	approveAsManager(ctx, addOnCSRs(ctx, c, a)[0].Name)
	waitForAddOnSecret(ctx, env, ns, a+"-hub-kubeconfig", subject.User)
	return subject.User
}

// grantAddOnSecrets lets the agent ServiceAccount of namespace agentNS
// write add-on Secrets and read Leases in ns, as the agent chart does in
// each of addons.installNamespaces.
func grantAddOnSecrets(ctx SpecContext, env *agentEnv, ns, agentNS string) {
	GinkgoHelper()
	const name = "flotilla-agent-addons"
	Expect(env.spoke.Client.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "create", "update", "delete"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get"}},
	}})).To(Succeed())
	Expect(env.spoke.Client.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "flotilla-agent", Namespace: agentNS}},
	})).To(Succeed())
}
