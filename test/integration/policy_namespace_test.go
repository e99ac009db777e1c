package integration

import (
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/agent"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	"github.com/flotilla-io/flotilla/deploy"
	"github.com/flotilla-io/flotilla/internal/kubeapply"
	"github.com/flotilla-io/flotilla/manifests"
)

// objectTemplate is one object template of a ConfigurationPolicy spec.
func objectTemplate(compliance string, obj map[string]any) map[string]any {
	return map[string]any{"complianceType": compliance, "objectDefinition": obj}
}

var _ = Describe("Policy agent: policy templates live in the cluster's namespace, as OCM keeps them", func() {
	It("keeps ConfigurationPolicies in the namespace named after the cluster, where policies written for OCM look for them", func(ctx SpecContext) {
		c := joinPolicyCluster(ctx)
		By("a template that checks the spoke for the ConfigurationPolicy of another, in the cluster's namespace, as OCM's stale-policy checks do")
		root := configurationPolicy("ns-checked", "checked-config", map[string]any{
			"remediationAction": "inform",
			"object-templates": []any{objectTemplate("musthave", map[string]any{
				"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "default"},
			})},
		})
		checker, err := json.Marshal(map[string]any{
			"apiVersion": policyv1.GroupVersion.String(), "kind": policyv1.ConfigurationPolicyKind,
			"metadata": map[string]any{"name": "finds-config"},
			"spec": map[string]any{
				"remediationAction": "inform",
				"namespaceSelector": map[string]any{"include": []any{c.name}},
				"object-templates": []any{objectTemplate("musthave", map[string]any{
					"apiVersion": policyv1.GroupVersion.String(), "kind": policyv1.ConfigurationPolicyKind,
					"metadata": map[string]any{"name": "checked-config", "labels": map[string]any{policyv1.PolicyLabel: "policies.ns-checked"}},
				})},
			},
		})
		Expect(err).NotTo(HaveOccurred())
		root.Spec.PolicyTemplates = append(root.Spec.PolicyTemplates, policyv1.PolicyTemplate{ObjectDefinition: runtime.RawExtension{Raw: checker}})
		c.replicate(ctx, root)
		Eventually(c.latest(ctx, "policies.ns-checked", "finds-config")).Should(Equal(
			"Compliant; notification - configurationpolicies [checked-config] found as specified in namespace " + c.name))
		Expect(c.env.spoke.Client.Get(ctx, client.ObjectKey{Name: c.name}, &corev1.Namespace{})).To(Succeed())
		cp := &policyv1.ConfigurationPolicy{}
		Expect(c.env.spoke.Client.Get(ctx, client.ObjectKey{Namespace: c.name, Name: "checked-config"}, cp)).To(Succeed())
		Expect(cp.Status.ComplianceState).To(Equal(policyv1.Compliant))
	})

	It("moves the ConfigurationPolicies an older agent kept in its own namespace, history, related objects and all", func(ctx SpecContext) {
		env := newAgentEnv(ctx)
		name := newClusterName("policy-move")
		opts := env.options(name)
		crds, err := manifests.AgentCRDs()
		Expect(err).NotTo(HaveOccurred())
		Expect(kubeapply.InstallCRDs(ctx, env.spoke.Config, crds)).To(Succeed())
		createSpokeNamespace(ctx, env.spoke, opts.Namespace)
		createSpokeNamespace(ctx, env.spoke, "moved-app")

		By("the state an older agent left: a ConfigMap its enforce template created, and the template in the agent's namespace")
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "moved-app", Name: "settings"}, Data: map[string]string{"k": "v"}}
		Expect(env.spoke.Client.Create(ctx, cm)).To(Succeed())
		spec := map[string]any{
			"remediationAction":   "enforce",
			"pruneObjectBehavior": "DeleteIfCreated",
			"object-templates": []any{objectTemplate("musthave", map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "settings", "namespace": "moved-app"}, "data": map[string]any{"k": "v"},
			})},
		}
		root := configurationPolicy("moved", "moved-config", spec)
		old := &policyv1.ConfigurationPolicy{}
		Expect(json.Unmarshal(root.Spec.PolicyTemplates[0].ObjectDefinition.Raw, old)).To(Succeed())
		old.Namespace = opts.Namespace
		old.Labels = map[string]string{policyv1.PolicyLabel: "policies.moved", policyv1.ClusterNameLabel: name, policyv1.ClusterNamespaceLabel: name}
		Expect(env.spoke.Client.Create(ctx, old)).To(Succeed())
		created := "configmaps [settings] was created successfully in namespace moved-app"
		found := "configmaps [settings] found as specified in namespace moved-app"
		old.Status = policyv1.ConfigurationPolicyStatus{
			ComplianceState: policyv1.Compliant,
			LastEvaluated:   metav1.Now().UTC().Format("2006-01-02T15:04:05Z"), LastEvaluatedGeneration: old.Generation,
			History: []policyv1.HistoryEvent{{Message: "Compliant; notification - " + found}, {Message: "Compliant; notification - " + created}},
			RelatedObjects: []policyv1.RelatedObject{{
				Compliant: string(policyv1.Compliant), Reason: "K8s `must have` object already exists",
				Object:     policyv1.ObjectResource{Kind: "ConfigMap", APIVersion: "v1", Metadata: policyv1.ObjectMetadata{Name: "settings", Namespace: "moved-app"}},
				Properties: &policyv1.ObjectProperties{CreatedByPolicy: ptr.To(true), UID: string(cm.UID)},
			}},
		}
		Expect(env.spoke.Client.Status().Update(ctx, old)).To(Succeed())

		By("and the replicated policy's history on the hub, in the cluster's namespace there (made here before the cluster joins)")
		Expect(hubCP.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
		p := (&policyCluster{name: name}).replicate(ctx, root)
		p.Status = policyv1.PolicyStatus{ComplianceState: policyv1.Compliant, Details: []policyv1.DetailsPerTemplate{{
			TemplateMeta: metav1.ObjectMeta{Name: "moved-config"}, ComplianceState: policyv1.Compliant,
			History: []policyv1.ComplianceHistory{{Message: "Compliant; notification - " + found, EventName: "policies.moved.1"}, {Message: "Compliant; notification - " + created, EventName: "policies.moved.0"}},
		}}}
		Expect(hubCP.Client.Status().Update(ctx, p)).To(Succeed())

		By("starting the agent")
		env.storeBootstrapSecret(ctx, opts.Namespace, bootstrapKubeconfig(hubCP.URL, hubCP.CAData, env.token))
		startAgent(opts)
		acceptAgent(ctx, name)
		deleteClusterAfterSpec(name)
		Eventually(clusterCondition(ctx, name, clusterv1.ManagedClusterConditionJoined)).Should(HaveField("Status", metav1.ConditionTrue))

		moved := &policyv1.ConfigurationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "moved-config"}}
		Eventually(func() error { return env.spoke.Client.Get(ctx, client.ObjectKeyFromObject(moved), moved) }).Should(Succeed())
		Eventually(spokeGone(ctx, env.spoke, &policyv1.ConfigurationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: opts.Namespace, Name: "moved-config"}})).Should(BeTrue())
		Expect(moved.Labels).To(HaveKeyWithValue(policyv1.PolicyLabel, "policies.moved"))
		Expect(moved.Status.History).To(HaveLen(2), "the history moves as it was: nothing happened that would add to it")
		Expect(moved.Status.History[1].Message).To(Equal("Compliant; notification - " + created))
		Expect(moved.Status.RelatedObjects).To(ContainElement(HaveField("Properties.UID", string(cm.UID))))

		By("the hub's history going on from where it was, enforce leaving the ConfigMap as it is")
		pc := &policyCluster{name: name}
		Consistently(pc.history(ctx, "policies.moved", "moved-config"), "3s").Should(Equal([]string{"Compliant; notification - " + found, "Compliant; notification - " + created}))
		live := &corev1.ConfigMap{}
		Expect(env.spoke.Client.Get(ctx, client.ObjectKeyFromObject(cm), live)).To(Succeed())
		Expect(live.UID).To(Equal(cm.UID))
		Expect(live.ResourceVersion).To(Equal(cm.ResourceVersion))

		By("removing the policy prunes what the older agent created, which only the moved status remembers")
		Expect(hubCP.Client.Delete(ctx, pc.policy(ctx, "policies.moved"))).To(Succeed())
		Eventually(spokeGone(ctx, env.spoke, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "moved-app", Name: "settings"}})).Should(BeTrue())
		Eventually(spokeGone(ctx, env.spoke, moved)).Should(BeTrue())
	})

	It("lets the agent's own ClusterRole create the cluster's namespace and keep its policy templates, and no more", func(ctx SpecContext) {
		env := newAgentEnv(ctx)
		objs, err := deploy.Render(deploy.AgentChart, agent.DefaultNamespace, map[string]any{
			"clusterName": "rbac-cluster", "createNamespace": true,
			"hub":       map[string]any{"apiServer": "https://hub.example.com:6443", "caCert": string(hubCP.CAData)},
			"bootstrap": map[string]any{"token": "abcdef.0123456789abcdef"},
			"execution": map[string]any{"rules": []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"configmaps"}, "verbs": []any{"get"}}}},
		})
		Expect(err).NotTo(HaveOccurred())
		applyRendered(ctx, env.spoke.Client, objs)
		sa := "system:serviceaccount:" + agent.DefaultNamespace + ":flotilla-agent"
		can := func(attr authorizationv1.ResourceAttributes) bool {
			sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User: sa, Groups: []string{"system:serviceaccounts"}, ResourceAttributes: ptr.To(attr),
			}}
			Expect(env.spoke.Client.Create(ctx, sar)).To(Succeed())
			return sar.Status.Allowed
		}
		for _, attr := range []authorizationv1.ResourceAttributes{
			{Verb: "create", Resource: "namespaces"},
			{Verb: "create", Group: policyv1.GroupName, Resource: "configurationpolicies", Namespace: "rbac-cluster"},
			{Verb: "update", Group: policyv1.GroupName, Resource: "configurationpolicies", Subresource: "status", Namespace: "rbac-cluster"},
			{Verb: "create", Group: policyv1.GroupName, Resource: "certificatepolicies", Namespace: "rbac-cluster"},
			{Verb: "update", Group: policyv1.GroupName, Resource: "certificatepolicies", Subresource: "status", Namespace: "rbac-cluster"},
		} {
			Expect(can(attr)).To(BeTrue(), "the agent may not %s %s/%s", attr.Verb, attr.Resource, attr.Subresource)
		}
		for _, attr := range []authorizationv1.ResourceAttributes{
			{Verb: "delete", Resource: "namespaces", Name: "rbac-cluster"},
			{Verb: "update", Resource: "namespaces", Name: "kube-system"},
			{Verb: "patch", Resource: "namespaces", Name: "default"},
			{Verb: "create", Resource: "secrets", Namespace: "rbac-cluster"},
			{Verb: "get", Resource: "secrets", Namespace: "kube-system"},
			{Verb: "create", Group: "rbac.authorization.k8s.io", Resource: "rolebindings", Namespace: "rbac-cluster"},
		} {
			Expect(can(attr)).To(BeFalse(), "the agent may %s %s %s", attr.Verb, attr.Resource, attr.Name)
		}
	})
})
