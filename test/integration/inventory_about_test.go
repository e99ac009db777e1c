package integration

import (
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	aboutv1alpha1 "github.com/flotilla-io/flotilla/api/about/v1alpha1"
	aboutv1beta1 "github.com/flotilla-io/flotilla/api/about/v1beta1"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/api/multicluster/v1alpha1"
	"github.com/flotilla-io/flotilla/deploy"
	"github.com/flotilla-io/flotilla/internal/kubeapply"
	"github.com/flotilla-io/flotilla/manifests"
)

var _ = Describe("About API", func() {
	It("carries a spoke's ClusterProperties, once the kind is served there, through cluster claims into the ClusterProfiles", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "about")
		env := newAgentEnv(ctx)
		c := newClusterName("about")
		opts := env.options(c)
		env.storeBootstrapSecret(ctx, opts.Namespace, bootstrapKubeconfig(hubCP.URL, hubCP.CAData, env.token))
		startAgent(opts)
		acceptAgent(ctx, c)
		deleteClusterAfterSpec(c)
		Eventually(func() error {
			mc := getCluster(ctx, c)
			if mc.Labels == nil {
				mc.Labels = map[string]string{}
			}
			mc.Labels[clusterv1beta2.ClusterSetLabel] = set
			return hubCP.Client.Update(ctx, mc)
		}).Should(Succeed())

		By("the profile of the joined cluster, as its agent reports it")
		Eventually(profile(ctx, ns, c), "60s").Should(And(
			Not(BeNil()),
			haveProfileCondition(multiclusterv1alpha1.ConditionJoined, metav1.ConditionTrue),
			haveProfileCondition(multiclusterv1alpha1.ConditionControlPlaneHealthy, metav1.ConditionTrue),
			HaveField("Status.Version.Kubernetes", Not(BeEmpty())),
			haveProperty(clusterv1.ClusterClaimID, Not(BeEmpty())),
		))

		By("the agent not installing the About API: it belongs to the cluster's owner")
		_, err := env.spoke.Kube.Discovery().ServerResourcesForGroupVersion(aboutv1beta1.GroupVersion.String())
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "about.k8s.io served on a fresh spoke: %v", err)

		By("the owner installing it and stating the cluster's id and ClusterSet")
		crds, err := manifests.SpokeOwnerCRDs()
		Expect(err).NotTo(HaveOccurred())
		Expect(kubeapply.InstallCRDs(ctx, env.spoke.Config, crds)).To(Succeed())
		id := &aboutv1beta1.ClusterProperty{ObjectMeta: metav1.ObjectMeta{Name: aboutv1beta1.ClusterIDProperty}, Spec: aboutv1beta1.ClusterPropertySpec{Value: c + ".example"}}
		member := &aboutv1beta1.ClusterProperty{ObjectMeta: metav1.ObjectMeta{Name: aboutv1beta1.ClusterSetProperty}, Spec: aboutv1beta1.ClusterPropertySpec{Value: "east"}}
		zone := &aboutv1beta1.ClusterProperty{ObjectMeta: metav1.ObjectMeta{Name: "zone.example.com"}, Spec: aboutv1beta1.ClusterPropertySpec{Value: "z1"}}
		for _, p := range []*aboutv1beta1.ClusterProperty{id, member, zone} {
			Eventually(func() error { return env.spoke.Client.Create(ctx, p) }).Should(Succeed())
		}
		Eventually(profile(ctx, ns, c), "60s").Should(And(
			haveProperty(aboutv1beta1.ClusterIDProperty, c+".example"),
			haveProperty(aboutv1beta1.ClusterSetProperty, "east"),
			haveProperty("zone.example.com", "z1"),
		))
		Expect(getCluster(ctx, c).Status.ClusterClaims).To(ContainElement(clusterv1.ManagedClusterClaim{Name: aboutv1beta1.ClusterSetProperty, Value: "east"}))

		By("changes and removals following, by the agent's watch")
		Eventually(func() error {
			if err := env.spoke.Client.Get(ctx, client.ObjectKeyFromObject(member), member); err != nil {
				return err
			}
			member.Spec.Value = "west"
			return env.spoke.Client.Update(ctx, member)
		}).Should(Succeed())
		Expect(env.spoke.Client.Delete(ctx, zone)).To(Succeed())
		Eventually(profile(ctx, ns, c), "30s").Should(And(
			haveProperty(aboutv1beta1.ClusterSetProperty, "west"),
			Not(HaveField("Status.Properties", ContainElement(HaveField("Name", "zone.example.com")))),
		))

		By("no properties once the kind is no longer served")
		crdResource := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
		Expect(dynamic.NewForConfigOrDie(env.spoke.Config).Resource(crdResource).Delete(ctx, crds[0].Name, metav1.DeleteOptions{})).To(Succeed())
		Eventually(func() error {
			_, err := env.spoke.Kube.Discovery().ServerResourcesForGroupVersion(schema.GroupVersion{Group: aboutv1beta1.GroupName, Version: "v1beta1"}.String())
			return err
		}, "30s").Should(Satisfy(apierrors.IsNotFound))
		Eventually(profile(ctx, ns, c), "60s").ShouldNot(haveProperty(aboutv1beta1.ClusterIDProperty, c+".example"))
	})

	It("reads a v1alpha1 ClusterProperty made right after its CRD is installed, at once, with no more than the agent chart's RBAC", func(ctx SpecContext) {
		env := newAgentEnv(ctx)
		c := newClusterName("about-fast")
		opts := env.options(c)
		// A long lease: nothing but the About API's own events makes the
		// agent report its status again within the spec.
		opts.LeaseDurationSeconds = 300
		env.storeBootstrapSecret(ctx, opts.Namespace, bootstrapKubeconfig(hubCP.URL, hubCP.CAData, env.token))

		By("the agent running as the chart's ServiceAccount, with the chart's RBAC and nothing else")
		objs, err := deploy.Render(deploy.AgentChart, opts.Namespace, map[string]any{
			"clusterName": c,
			"hub":         map[string]any{"apiServer": hubCP.URL, "caCert": string(hubCP.CAData)},
			"bootstrap":   map[string]any{"create": false},
			"execution":   map[string]any{"rules": []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"configmaps"}, "verbs": []any{"get"}}}},
		})
		Expect(err).NotTo(HaveOccurred())
		var rbac []*unstructured.Unstructured
		for _, o := range objs {
			// Namespace: the add-ons' install namespace, where the chart's Role is.
			if slices.Contains([]string{"Namespace", "ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"}, o.GetKind()) {
				rbac = append(rbac, o)
			}
		}
		applyRendered(ctx, env.spoke.Client, rbac)
		opts.SpokeKubeconfig = serviceAccountKubeconfig(ctx, env.spoke, opts.Namespace, "flotilla-agent")
		startAgent(opts)
		acceptAgent(ctx, c)
		deleteClusterAfterSpec(c)
		Eventually(func() []clusterv1.ManagedClusterClaim { return getCluster(ctx, c).Status.ClusterClaims }, "60s").
			Should(ContainElement(HaveField("Name", clusterv1.ClusterClaimID)))

		By("the owner installing Flotilla's copy of the CRD, which serves v1alpha1 as the SIG's does, and a property at once")
		crds, err := manifests.SpokeOwnerCRDs()
		Expect(err).NotTo(HaveOccurred())
		Expect(kubeapply.InstallCRDs(ctx, env.spoke.Config, crds)).To(Succeed())
		zone := &unstructured.Unstructured{}
		zone.SetGroupVersionKind(aboutv1alpha1.GroupVersion.WithKind("ClusterProperty"))
		zone.SetName("zone.example.com")
		Expect(unstructured.SetNestedField(zone.Object, "z9", "spec", "value")).To(Succeed())
		Eventually(func() error { return env.spoke.Client.Create(ctx, zone) }, "5s", "100ms").Should(Succeed())
		created := time.Now()

		By("the claim on the ManagedCluster within seconds, long before the next lease period")
		Eventually(func() []clusterv1.ManagedClusterClaim { return getCluster(ctx, c).Status.ClusterClaims }, "10s", "200ms").
			Should(ContainElement(clusterv1.ManagedClusterClaim{Name: "zone.example.com", Value: "z9"}))
		GinkgoWriter.Printf("ClusterProperty reported %v after its creation\n", time.Since(created).Round(100*time.Millisecond))

		By("the chart granting no more for it than before: ClusterProperties read only, CRDs watched as the agent does for its own")
		for _, verb := range []string{"create", "update", "delete"} {
			Expect(spokeAllowed(ctx, env, opts.Namespace, verb, aboutv1beta1.GroupName, "clusterproperties")).To(BeFalse(), "the agent may %s clusterproperties", verb)
		}
		Expect(spokeAllowed(ctx, env, opts.Namespace, "watch", "apiextensions.k8s.io", "customresourcedefinitions")).To(BeTrue())
	})
})

// spokeAllowed asks the spoke whether the agent's ServiceAccount in ns may
// verb resource of group.
func spokeAllowed(ctx SpecContext, env *agentEnv, ns, verb, group, resource string) bool {
	GinkgoHelper()
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: "system:serviceaccount:" + ns + ":flotilla-agent", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns},
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Group: group, Resource: resource},
	}}
	Expect(env.spoke.Client.Create(ctx, sar)).To(Succeed())
	return sar.Status.Allowed
}
