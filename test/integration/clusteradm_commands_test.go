package integration

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/agent"
	operatorv1 "github.com/flotilla-io/flotilla/api/operator/v1"
	"github.com/flotilla-io/flotilla/hub"
	"github.com/flotilla-io/flotilla/hub/bootstraptoken"
	"github.com/flotilla-io/flotilla/hub/clustermanager"
	"github.com/flotilla-io/flotilla/test/framework"
)

// These specs run clusteradm's hub-info, delete token and unjoin as
// clusteradm does them (OCM's clusteradm 1.x, pkg/cmd/get/hubinfo,
// pkg/cmd/delete/token, pkg/cmd/unjoin): the same objects, read and
// deleted the same way, then check what docs/clusteradm.md says of each.
var _ = Describe("clusteradm's hub-info, delete token and unjoin", func() {
	It("finds every component get hub-info asks the ClusterManager for, each a Lease its hub renews and none a Deployment", func(ctx SpecContext) {
		By("on the hub of this process, which serves the ManifestWork webhook")
		expectHubInfo(ctx, hubCP.Kube, hubCP.Client, true)

		By("on an existing cluster whose hub controllers serve no webhook (flotilla-hub --kubeconfig)")
		existing, err := framework.Start(ctx, framework.HubAPI)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(existing.Stop)
		mgrCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
		done, err := hub.StartManager(mgrCtx, existing.Config, hub.Options{MetricsAddr: "0", HealthProbeAddr: "0", LeaderElect: true, LeaderIdentity: "hub-on-existing-cluster"})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { stop(); <-done })
		leases := expectHubInfo(ctx, existing.Kube, existing.Client, false)
		Expect(leases[clustermanager.RegistrationController].Spec.HolderIdentity).To(HaveValue(Equal("hub-on-existing-cluster")))
	})

	It("closes the join path on delete token until flotilla init opens it again, and says so", func(ctx SpecContext) {
		// A hub of its own: a closed join path would fail the other specs
		// of this process.
		cp, err := framework.Start(ctx, framework.Hub)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { cp.Stop() })
		hubTokens := func(g Gomega) []string {
			list, err := cp.Kube.CoreV1().Secrets(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{LabelSelector: bootstraptoken.RotationLabel + "=" + bootstraptoken.RotationValue})
			g.Expect(err).NotTo(HaveOccurred())
			var names []string
			for _, s := range list.Items {
				names = append(names, s.Name)
			}
			return names
		}
		Eventually(hubTokens).ShouldNot(BeEmpty())

		By("deleting what clusteradm delete token deletes")
		clusteradmDeleteToken(ctx, cp.Kube, apiextensionsclient.NewForConfigOrDie(cp.Config))

		By("the hub makes no token, and says the join path is closed")
		Consistently(hubTokens).WithTimeout(3 * time.Second).Should(BeEmpty())
		expectJoinPathOpen(ctx, cp.Client, metav1.ConditionFalse)

		By("flotilla get token refuses to hand out a token, and says what to run")
		before := kubeSystemSecrets(ctx, cp.Kube)
		getToken := func() cliResult {
			return flotilla(ctx, "get", "token", "-o", "json", "--kubeconfig", cp.AdminKubeconfig)
		}
		res := getToken()
		Expect(res.Code).NotTo(Equal(0))
		Expect(res.Stdout).To(BeEmpty())
		Expect(res.Stderr).To(ContainSubstring("is closed: the ClusterRole open-cluster-management:bootstrap"))
		Expect(res.Stderr).To(ContainSubstring(cp.URL))
		Expect(res.Stderr).To(ContainSubstring("Run `flotilla init`"))
		Expect(kubeSystemSecrets(ctx, cp.Kube)).To(Equal(before), "get token created a token")

		By("a restarted hub keeps it closed")
		cp, err = cp.Restart(ctx)
		Expect(err).NotTo(HaveOccurred())
		_, err = cp.Kube.RbacV1().ClusterRoles().Get(ctx, bootstraptoken.ClusterRoleName, metav1.GetOptions{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "ClusterRole after the restart: %v", err)
		expectJoinPathOpen(ctx, cp.Client, metav1.ConditionFalse)
		Expect(hubTokens(Default)).To(BeEmpty())

		By("flotilla init opens it again: what delete token deleted is back, and its token joins")
		res = flotilla(ctx, "init", "-o", "json", "--kubeconfig", cp.AdminKubeconfig)
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stderr).To(ContainSubstring("Hub: created ClusterRole open-cluster-management:bootstrap"))
		Expect(res.Stderr).To(ContainSubstring("Hub: created ServiceAccount open-cluster-management/agent-registration-bootstrap"))
		var t joinToken
		Expect(json.Unmarshal([]byte(res.Stdout), &t)).To(Succeed())
		Expect(cp.Kube.CoreV1().ServiceAccounts(bootstraptoken.Namespace).Get(ctx, bootstraptoken.ServiceAccountName, metav1.GetOptions{})).NotTo(BeNil())
		Expect(cp.Kube.RbacV1().ClusterRoleBindings().Get(ctx, bootstraptoken.ServiceAccountName, metav1.GetOptions{})).NotTo(BeNil())
		for _, subject := range []authorizationv1.SubjectAccessReviewSpec{
			{User: "system:bootstrap:" + strings.SplitN(t.HubToken, ".", 2)[0], Groups: []string{bootstraptoken.Group}},
			{User: bootstraptoken.ServiceAccountUser, Groups: []string{"system:serviceaccounts"}},
		} {
			subject.ResourceAttributes = &authorizationv1.ResourceAttributes{Group: "cluster.open-cluster-management.io", Resource: "managedclusters", Verb: "create"}
			Eventually(func(g Gomega) bool {
				sar, err := cp.Kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: subject}, metav1.CreateOptions{})
				g.Expect(err).NotTo(HaveOccurred())
				return sar.Status.Allowed
			}).Should(BeTrue(), "%s may create a ManagedCluster", subject.User)
		}
		expectJoinPathOpen(ctx, cp.Client, metav1.ConditionTrue)
		Eventually(hubTokens).ShouldNot(BeEmpty(), "the hub rotates a token again")
		res = getToken()
		Expect(res.Code).To(Equal(0), res.Stderr)
	})

	It("finds no Klusterlet to unjoin on a Flotilla-joined cluster, and the command the docs name instead removes the agent", func(ctx SpecContext) {
		spoke, err := framework.Start(ctx, framework.Spoke)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(spoke.Stop)
		name := newClusterName("adm-unjoin")
		token := hubInit(ctx)
		res := flotilla(ctx, "join", "--hub-token", token.HubToken, "--hub-apiserver", token.HubAPIServer, "--cluster-name", name, "--kubeconfig", spoke.AdminKubeconfig)
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(spoke.Client.Get(ctx, client.ObjectKey{Name: agent.DefaultNamespace}, &corev1.Namespace{})).To(Succeed())

		By("reading what clusteradm unjoin reads: the Klusterlet CRD, which a Flotilla agent has none of")
		_, err = apiextensionsclient.NewForConfigOrDie(spoke.Config).ApiextensionsV1().CustomResourceDefinitions().
			Get(ctx, "klusterlets.operator.open-cluster-management.io", metav1.GetOptions{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "clusteradm unjoin would find a Klusterlet CRD: %v", err)

		By("running the command docs/clusteradm.md gives instead")
		args := docsInstead("clusteradm unjoin", map[string]string{"--kubeconfig": spoke.AdminKubeconfig, "--cluster-name": name})
		Expect(args[0]).To(Equal("unjoin"))
		res = flotilla(ctx, args...)
		Expect(res.Code).To(Equal(0), res.Stderr)
		Eventually(func() error {
			return spoke.Client.Get(ctx, client.ObjectKey{Name: agent.DefaultNamespace}, &corev1.Namespace{})
		}).WithTimeout(time.Minute).Should(Satisfy(apierrors.IsNotFound))
	})
})

// hubInfoComponents are the components clusteradm get hub-info prints for
// a ClusterManager's spec: the add-on manager unless disabled, the work
// controller when ManifestWorkReplicaSet is enabled.
func hubInfoComponents(cm *operatorv1.ClusterManager) []string {
	enabled := func(gates []operatorv1.FeatureGate, feature string) bool {
		for _, g := range gates {
			if g.Feature == feature {
				return g.Mode == "Enable"
			}
		}
		return false
	}
	var names []string
	if cm.Spec.AddOnManagerConfiguration == nil || enabled(cm.Spec.AddOnManagerConfiguration.FeatureGates, "AddonManagement") {
		names = append(names, "cluster-manager-addon-manager-controller")
	}
	names = append(names, "cluster-manager-registration-controller", "cluster-manager-registration-webhook")
	if cm.Spec.WorkConfiguration != nil && enabled(cm.Spec.WorkConfiguration.FeatureGates, "ManifestWorkReplicaSet") {
		names = append(names, "cluster-manager-work-controller")
	}
	return append(names, "cluster-manager-work-webhook", "cluster-manager-placement-controller")
}

// expectHubInfo reads the hub as clusteradm get hub-info does and checks
// that every lookup succeeds and that what the ClusterManager names is
// there: a renewed Lease for each component the hub runs (the work webhook
// only when it serves one). It returns the Leases by name.
func expectHubInfo(ctx SpecContext, kube kubernetes.Interface, c client.Client, workWebhook bool) map[string]*coordinationv1.Lease {
	GinkgoHelper()
	_, err := kube.AppsV1().Deployments("open-cluster-management").Get(ctx, "cluster-manager", metav1.GetOptions{})
	Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the registration operator's Deployment: %v (hub-info prints <none> without it)", err)

	leases := map[string]*coordinationv1.Lease{}
	Eventually(func(g Gomega) {
		cm := &operatorv1.ClusterManager{}
		g.Expect(c.Get(ctx, client.ObjectKey{Name: "cluster-manager"}, cm)).To(Succeed())
		names := hubInfoComponents(cm)
		g.Expect(names).To(ContainElement(clustermanager.AddOnManager), "the spec says the add-on manager runs")
		for _, name := range names {
			// clusteradm's lookup: the last related resource of that name,
			// whose namespace and name it gets as a Deployment.
			var related operatorv1.RelatedResourceMeta
			for _, r := range cm.Status.RelatedResources {
				if r.Name == name {
					related = r
				}
			}
			g.Expect(related.Name).NotTo(BeEmpty(), "no related resource %s: clusteradm fails with 'resource name may not be empty'", name)
			_, err := kube.AppsV1().Deployments(related.Namespace).Get(ctx, related.Name, metav1.GetOptions{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "Deployment %s/%s: %v", related.Namespace, related.Name, err)

			g.Expect(related.Resource).To(Equal("leases"))
			lease, err := kube.CoordinationV1().Leases(related.Namespace).Get(ctx, related.Name, metav1.GetOptions{})
			if name == clustermanager.WorkWebhook && !workWebhook {
				g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "a hub that serves no webhook holds no work webhook Lease: %v", err)
				continue
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(lease.Spec.HolderIdentity).To(HaveValue(Not(BeEmpty())))
			g.Expect(lease.Spec.RenewTime).NotTo(BeNil())
			g.Expect(time.Since(lease.Spec.RenewTime.Time)).To(BeNumerically("<", time.Duration(*lease.Spec.LeaseDurationSeconds)*time.Second))
			g.Expect(lease.Annotations).To(HaveKey(clustermanager.RunsAnnotation))
			leases[name] = lease
		}
	}).WithTimeout(time.Minute).Should(Succeed())
	return leases
}

// clusteradmDeleteToken deletes what clusteradm delete token deletes, in
// its order, after its check that this is a hub.
func clusteradmDeleteToken(ctx SpecContext, kube kubernetes.Interface, crds apiextensionsclient.Interface) {
	GinkgoHelper()
	_, err := crds.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, "clustermanagers.operator.open-cluster-management.io", metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred(), "clusteradm delete token says 'this is not a hub'")
	ignoreNotFound := func(err error) {
		GinkgoHelper()
		if !apierrors.IsNotFound(err) {
			Expect(err).NotTo(HaveOccurred())
		}
	}
	rbac := kube.RbacV1()
	ignoreNotFound(rbac.ClusterRoleBindings().Delete(ctx, "open-cluster-management:bootstrap:agent-registration", metav1.DeleteOptions{}))
	ignoreNotFound(rbac.ClusterRoleBindings().Delete(ctx, "agent-registration-bootstrap", metav1.DeleteOptions{}))
	ignoreNotFound(rbac.ClusterRoles().Delete(ctx, "open-cluster-management:bootstrap", metav1.DeleteOptions{}))
	list, err := kube.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "app = cluster-manager"})
	Expect(err).NotTo(HaveOccurred())
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[j].CreationTimestamp.Before(&list.Items[i].CreationTimestamp) })
	for _, s := range list.Items {
		if strings.HasPrefix(s.Name, "bootstrap-token-") {
			ignoreNotFound(kube.CoreV1().Secrets(s.Namespace).Delete(ctx, s.Name, metav1.DeleteOptions{}))
			break
		}
	}
	ignoreNotFound(kube.CoreV1().ServiceAccounts("open-cluster-management").Delete(ctx, "agent-registration-bootstrap", metav1.DeleteOptions{}))
	// What is left of the join path: the binding of the token group.
	Expect(rbac.ClusterRoleBindings().Get(ctx, bootstraptoken.ClusterRoleName, metav1.GetOptions{})).To(HaveField("RoleRef", rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: bootstraptoken.ClusterRoleName}))
}

// expectJoinPathOpen waits for the ClusterManager's JoinPathOpen condition.
func expectJoinPathOpen(ctx SpecContext, c client.Client, status metav1.ConditionStatus) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		cm := &operatorv1.ClusterManager{}
		g.Expect(c.Get(ctx, client.ObjectKey{Name: "cluster-manager"}, cm)).To(Succeed())
		cond := meta.FindStatusCondition(cm.Status.Conditions, clustermanager.ConditionJoinPathOpen)
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Status).To(Equal(status), cond.Message)
		if status == metav1.ConditionFalse {
			g.Expect(cond.Message).To(ContainSubstring("flotilla init"))
		}
	}).WithTimeout(time.Minute).Should(Succeed())
}

// kubeSystemSecrets names the Secrets of kube-system.
func kubeSystemSecrets(ctx SpecContext, kube kubernetes.Interface) []string {
	GinkgoHelper()
	list, err := kube.CoreV1().Secrets(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	var names []string
	for _, s := range list.Items {
		names = append(names, s.Name)
	}
	sort.Strings(names)
	return names
}

// docsInstead returns the arguments of the flotilla command that
// docs/clusteradm.md's table gives to run instead of command (its last
// column), with each
// <placeholder> value of a flag replaced from values.
func docsInstead(command string, values map[string]string) []string {
	GinkgoHelper()
	doc, err := os.ReadFile("../../docs/clusteradm.md")
	Expect(err).NotTo(HaveOccurred())
	var row string
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(line, "| `"+command+"`") || strings.HasPrefix(line, "| `"+command+" ") {
			row = line
		}
	}
	Expect(row).NotTo(BeEmpty(), "docs/clusteradm.md has no table row for %s", command)
	cells := strings.Split(strings.Trim(row, "| "), "|")
	instead := cells[len(cells)-1]
	m := regexp.MustCompile("`flotilla ([^`]+)`").FindStringSubmatch(instead)
	Expect(m).NotTo(BeNil(), "the row of %s names no flotilla command to run instead: %s", command, row)
	args := strings.Fields(m[1])
	for i, a := range args {
		if strings.HasPrefix(a, "<") {
			Expect(i).To(BeNumerically(">", 0))
			v, ok := values[args[i-1]]
			Expect(ok).To(BeTrue(), "no value for %s %s in %q", args[i-1], a, m[0])
			args[i] = v
		}
	}
	return args
}
