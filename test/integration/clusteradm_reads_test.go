package integration

import (
	"context"
	"fmt"
	"sort"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	addonv1beta1 "github.com/flotilla-io/flotilla/api/addon/v1beta1"
	operatorv1 "github.com/flotilla-io/flotilla/api/operator/v1"
	"github.com/flotilla-io/flotilla/hub/addon"
	"github.com/flotilla-io/flotilla/hub/bootstraptoken"
	"github.com/flotilla-io/flotilla/hub/clustermanager"
	"github.com/flotilla-io/flotilla/internal/identity"
)

// These specs read the hub the way clusteradm (OCM's CLI) does: `get token`,
// `get token --use-bootstrap-token`, `delete token`, `get hub-info` and `get
// addon`, with the same requests, label selectors and API versions.
var _ = Describe("What clusteradm reads", func() {
	It("hands out a token of the bootstrap ServiceAccount that can join and no more (get token)", func(ctx SpecContext) {
		tr, err := hubCP.Kube.CoreV1().ServiceAccounts(bootstraptoken.Namespace).CreateToken(ctx, bootstraptoken.ServiceAccountName,
			&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(tr.Status.Token).NotTo(BeEmpty())

		kube, c := bootstrapClients(tr.Status.Token)
		review, err := kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(review.Status.UserInfo.Username).To(Equal(bootstraptoken.ServiceAccountUser))

		By("joining with it: a ManagedCluster and a CSR, which flotilla accept approves")
		name := newClusterName("sa-join")
		deleteClusterAfterSpec(name)
		createManagedCluster(ctx, c, name)
		csr := createCSR(ctx, kube, name, name)
		res := onHub(ctx, "accept", "--clusters", name)
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(csrApproved(ctx, csr)).To(BeTrue())

		By("and reading nothing else")
		_, err = kube.CoreV1().Secrets(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{})
		Expect(err).To(beForbidden())
	})

	It("finds the newest bootstrap token by label app=cluster-manager, valid and rotated by the hub (get token --use-bootstrap-token)", func(ctx SpecContext) {
		newest := func(ctx context.Context) (*corev1.Secret, error) {
			// clusteradm's own selector and choice: the newest bootstrap-token-* Secret.
			list, err := hubCP.Kube.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "app = cluster-manager"})
			if err != nil {
				return nil, err
			}
			sort.Slice(list.Items, func(i, j int) bool {
				return list.Items[j].CreationTimestamp.Before(&list.Items[i].CreationTimestamp)
			})
			for i := range list.Items {
				if strings.HasPrefix(list.Items[i].Name, "bootstrap-token-") {
					return &list.Items[i], nil
				}
			}
			return nil, fmt.Errorf("no Secret bootstrap-token-* labelled app=cluster-manager")
		}
		var secret *corev1.Secret
		Eventually(func() error { var err error; secret, err = newest(ctx); return err }).Should(Succeed())
		token := string(secret.Data["token-id"]) + "." + string(secret.Data["token-secret"])
		expectJoinToken(ctx, token)

		By("deleting the token Secrets alone (kubectl delete secret): the hub makes another")
		hubTokens := func() []string {
			list, err := hubCP.Kube.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{LabelSelector: bootstraptoken.RotationLabel + "=" + bootstraptoken.RotationValue})
			Expect(err).NotTo(HaveOccurred())
			var names []string
			for _, s := range list.Items {
				names = append(names, s.Name)
			}
			return names
		}
		Eventually(hubTokens).ShouldNot(BeEmpty())
		for _, name := range hubTokens() {
			Expect(hubCP.Kube.CoreV1().Secrets("kube-system").Delete(ctx, name, metav1.DeleteOptions{})).To(Succeed())
		}
		Eventually(hubTokens).Should(HaveLen(1))
		replacement := hubTokens()[0]
		Expect(replacement).NotTo(Equal(secret.Name))
		s, err := hubCP.Kube.CoreV1().Secrets("kube-system").Get(ctx, replacement, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Labels).To(HaveKeyWithValue("app", "cluster-manager"))
		expectJoinToken(ctx, string(s.Data["token-id"])+"."+string(s.Data["token-secret"]))

		By("flotilla get token hands out a valid token without creating one")
		res := onHub(ctx, "get", "token", "-o", "json")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stderr).NotTo(ContainSubstring("created token"))
	})

	It("serves the ClusterManager cluster-manager, whose status describes the hub (get hub-info, delete token)", func(ctx SpecContext) {
		crds := apiextensionsclient.NewForConfigOrDie(hubCP.Config)
		_, err := crds.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, "clustermanagers.operator.open-cluster-management.io", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred(), "clusteradm delete token says 'this is not a hub' without this CRD")

		cm := &operatorv1.ClusterManager{}
		Eventually(func(g Gomega) {
			g.Expect(hubCP.Client.Get(ctx, client.ObjectKey{Name: "cluster-manager"}, cm)).To(Succeed())
			applied := meta.FindStatusCondition(cm.Status.Conditions, clustermanager.ConditionApplied)
			g.Expect(applied).NotTo(BeNil())
			g.Expect(applied.Status).To(Equal(metav1.ConditionTrue), applied.Message)
		}).Should(Succeed())
		Expect(cm.Status.RelatedResources).To(ContainElements(
			operatorv1.RelatedResourceMeta{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions", Name: "managedclusters.cluster.open-cluster-management.io"},
			operatorv1.RelatedResourceMeta{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions", Name: "managedclusteraddons.addon.open-cluster-management.io"},
		))
		Expect(cm.Spec.AddOnManagerConfiguration.FeatureGates).To(ContainElement(operatorv1.FeatureGate{Feature: "AddonManagement", Mode: "Enable"}))

		By("a spec an older hub wrote, with the add-on manager off: the hub takes it back")
		patch := client.MergeFrom(cm.DeepCopy())
		cm.Spec.AddOnManagerConfiguration.FeatureGates = []operatorv1.FeatureGate{{Feature: "AddonManagement", Mode: "Disable"}}
		Expect(hubCP.Client.Patch(ctx, cm, patch)).To(Succeed())
		Eventually(func(g Gomega) []operatorv1.FeatureGate {
			g.Expect(hubCP.Client.Get(ctx, client.ObjectKey{Name: "cluster-manager"}, cm)).To(Succeed())
			return cm.Spec.AddOnManagerConfiguration.FeatureGates
		}).Should(Equal([]operatorv1.FeatureGate{{Feature: "AddonManagement", Mode: "Enable"}}))

		By("deleting it: the hub puts it back")
		uid := cm.UID
		Expect(hubCP.Client.Delete(ctx, cm)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(hubCP.Client.Get(ctx, client.ObjectKey{Name: "cluster-manager"}, cm)).To(Succeed())
			g.Expect(cm.UID).NotTo(Equal(uid))
			g.Expect(meta.IsStatusConditionTrue(cm.Status.Conditions, clustermanager.ConditionApplied)).To(BeTrue())
		}).Should(Succeed())
	})

	It("serves the add-on kinds in both versions, and says on each ManagedClusterAddOn that it runs no add-on manager (get addon)", func(ctx SpecContext) {
		cluster := newClusterName("addons")
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cluster}}
		Expect(hubCP.Client.Create(ctx, ns)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { Expect(hubCP.Client.Delete(ctx, ns)).To(Succeed()) })
		declared, undeclared := cluster+"-declared", cluster+"-undeclared"
		cma := &addonv1alpha1.ClusterManagementAddOn{
			ObjectMeta: metav1.ObjectMeta{Name: declared},
			Spec:       addonv1alpha1.ClusterManagementAddOnSpec{AddOnMeta: addonv1alpha1.AddOnMeta{DisplayName: "Declared"}},
		}
		Expect(hubCP.Client.Create(ctx, cma)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { Expect(client.IgnoreNotFound(hubCP.Client.Delete(ctx, cma))).To(Succeed()) })
		for _, name := range []string{declared, undeclared} {
			Expect(hubCP.Client.Create(ctx, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name}})).To(Succeed())
		}

		By("listing as clusteradm get addon does: v1alpha1, every namespace")
		cmas := &addonv1alpha1.ClusterManagementAddOnList{}
		Expect(hubCP.Client.List(ctx, cmas)).To(Succeed())
		Expect(cmas.Items).To(ContainElement(HaveField("Name", declared)))
		reason := func(name string) func(g Gomega) string {
			return func(g Gomega) string {
				mcas := &addonv1alpha1.ManagedClusterAddOnList{}
				g.Expect(hubCP.Client.List(ctx, mcas)).To(Succeed())
				for _, m := range mcas.Items {
					if m.Namespace == cluster && m.Name == name {
						if c := meta.FindStatusCondition(m.Status.Conditions, addon.ConditionManifestApplied); c != nil {
							g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
							return c.Reason
						}
						return ""
					}
				}
				return "absent"
			}
		}
		Eventually(reason(declared)).Should(Equal(addon.ReasonAddOnManagerNotRunning))
		Eventually(reason(undeclared)).Should(Equal(addon.ReasonClusterManagementAddOnNotFound))

		By("reading the same objects as v1beta1, which OCM's agents watch")
		beta := &addonv1beta1.ManagedClusterAddOn{}
		Expect(hubCP.Client.Get(ctx, client.ObjectKey{Namespace: cluster, Name: declared}, beta)).To(Succeed())
		Expect(meta.FindStatusCondition(beta.Status.Conditions, addon.ConditionManifestApplied)).NotTo(BeNil())
		betaCMA := &addonv1beta1.ClusterManagementAddOn{}
		Expect(hubCP.Client.Get(ctx, client.ObjectKey{Name: declared}, betaCMA)).To(Succeed())
		Expect(betaCMA.Spec.AddOnMeta.DisplayName).To(Equal("Declared"))

		By("leaving an add-on run by its own manager to that manager")
		Expect(hubCP.Client.Get(ctx, client.ObjectKeyFromObject(cma), cma)).To(Succeed())
		cma.Annotations = map[string]string{addon.LifecycleAnnotation: addon.LifecycleSelf}
		Expect(hubCP.Client.Update(ctx, cma)).To(Succeed())
		Eventually(reason(declared)).Should(BeEmpty())

		By("storing the configuration kinds")
		adc := &addonv1alpha1.AddOnDeploymentConfig{
			ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: "config"},
			Spec:       addonv1alpha1.AddOnDeploymentConfigSpec{CustomizedVariables: []addonv1alpha1.CustomizedVariable{{Name: "LOG_LEVEL", Value: "4"}}},
		}
		Expect(hubCP.Client.Create(ctx, adc)).To(Succeed())
		betaADC := &addonv1beta1.AddOnDeploymentConfig{}
		Expect(hubCP.Client.Get(ctx, client.ObjectKeyFromObject(adc), betaADC)).To(Succeed())
		Expect(betaADC.Spec.CustomizedVariables).To(Equal(adc.Spec.CustomizedVariables))
		Expect(betaADC.Spec.AgentInstallNamespace).To(Equal("open-cluster-management-agent-addon"))
		tmpl := &addonv1alpha1.AddOnTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: cluster + "-template"},
			Spec:       addonv1alpha1.AddOnTemplateSpec{AddonName: declared},
		}
		Expect(hubCP.Client.Create(ctx, tmpl)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { Expect(client.IgnoreNotFound(hubCP.Client.Delete(ctx, tmpl))).To(Succeed()) })
	})

	It("lets an accepted cluster's agent read the ManagedClusterAddOns of its own namespace only, as OCM's agent watches them", func(ctx SpecContext) {
		c := newClusterName("addon-rbac")
		createCluster(ctx, c)
		acceptCluster(ctx, c)
		can := func(verb, ns string) func(g Gomega) bool {
			return func(g Gomega) bool {
				sar, err := hubCP.Kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
					User:   "system:open-cluster-management:" + c + ":agent1",
					Groups: identity.AgentGroups(c),
					ResourceAttributes: &authorizationv1.ResourceAttributes{
						Group: "addon.open-cluster-management.io", Version: "v1beta1", Resource: "managedclusteraddons", Verb: verb, Namespace: ns,
					},
				}}, metav1.CreateOptions{})
				g.Expect(err).NotTo(HaveOccurred())
				return sar.Status.Allowed
			}
		}
		for _, verb := range []string{"get", "list", "watch"} {
			Eventually(can(verb, c)).Should(BeTrue(), verb)
			Expect(can(verb, "default")(Default)).To(BeFalse(), verb)
		}
		Expect(can("create", c)(Default)).To(BeFalse())
		Expect(can("delete", c)(Default)).To(BeFalse())
	})
})

// expectJoinToken checks that the hub authenticates token as a join token.
func expectJoinToken(ctx context.Context, token string) {
	GinkgoHelper()
	kube := kubernetes.NewForConfigOrDie(hubCP.ConfigFor(nil, nil, token))
	Eventually(func(g Gomega) {
		review, err := kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(review.Status.UserInfo.Groups).To(ContainElement(bootstraptoken.Group))
	}).Should(Succeed())
}
