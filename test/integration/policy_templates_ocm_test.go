package integration

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

// copiedTemplate returns, for Eventually, policy template i of the copy of
// root ns/name in cluster, decoded (nil while there is no copy).
func copiedTemplate(ctx context.Context, cluster, ns, name string, i int) func() map[string]any {
	return func() map[string]any {
		p := &policyv1.Policy{}
		if err := hubCP.Client.Get(ctx, client.ObjectKey{Namespace: cluster, Name: ns + "." + name}, p); err != nil || len(p.Spec.PolicyTemplates) <= i {
			return nil
		}
		return templateObject(p, i)
	}
}

// rawOf is the object-templates-raw of a decoded policy template.
func rawOf(t map[string]any) string {
	spec, _ := t["spec"].(map[string]any)
	s, _ := spec["object-templates-raw"].(string)
	return s
}

// firstDefinition is the objectDefinition of the first object template.
func firstDefinition(t map[string]any) map[string]any {
	spec, _ := t["spec"].(map[string]any)
	ots, _ := spec["object-templates"].([]any)
	if len(ots) == 0 {
		return nil
	}
	def, _ := ots[0].(map[string]any)["objectDefinition"].(map[string]any)
	return def
}

var _ = Describe("Policy hub templates as OCM resolves them", func() {
	It("copies objects from the hub with lookup in object-templates-raw, types values set through if/else, and resolves again when a listed object appears", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "plc-tpl-ocm")
		a := newClusterName("plc-tpl-ocm-a")
		createPolicyMember(ctx, a, set, map[string]string{"env": "prod"})
		prodPlacement(ctx, ns, "prod")
		copyLabel := map[string]string{"copy": "yes"}
		Expect(hubCP.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "one", Labels: copyLabel},
			Data: map[string]string{"a": "1"}})).To(Succeed())
		Expect(hubCP.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "not-copied"},
			Data: map[string]string{"b": "2"}})).To(Succeed())

		root := configurationPolicy("copier", "copier-raw", map[string]any{
			"remediationAction": "inform",
			"object-templates-raw": `{{hub- range (lookup "v1" "ConfigMap" "" "" "copy=yes").items hub}}
- complianceType: musthave
  objectDefinition:
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: '{{hub .metadata.name hub}}', namespace: default}
    data: '{{hub copyConfigMapData "" .metadata.name hub}}'
{{hub- end hub}}
`,
		})
		typed := configurationPolicy("copier", "copier-typed", map[string]any{
			"remediationAction": "inform",
			"object-templates": []any{map[string]any{"complianceType": "musthave", "objectDefinition": map[string]any{
				"apiVersion": "apps/v1", "kind": "Deployment",
				"metadata": map[string]any{"name": "web", "namespace": "default", "labels": map[string]any{
					"cluster": `{{hub (lookup "cluster.open-cluster-management.io/v1" "ManagedCluster" "" .ManagedClusterName).metadata.name hub}}`,
					"tier":    `{{hub .ManagedClusterLabels.tier | default "standard" hub}}`,
				}},
				"spec": map[string]any{
					"replicas": `{{hub if eq .ManagedClusterLabels.env "prod" hub}}{{hub "3" | toInt hub}}{{hub else hub}}{{hub "1" | toInt hub}}{{hub end hub}}`,
					"paused":   `{{hub if .ManagedClusterLabels.paused hub}}{{hub "true" | toBool hub}}{{hub else hub}}{{hub "false" | toBool hub}}{{hub end hub}}`,
				},
			}}},
		})
		root.Namespace = ns
		root.Spec.PolicyTemplates = append(root.Spec.PolicyTemplates, typed.Spec.PolicyTemplates...)
		Expect(hubCP.Client.Create(ctx, root)).To(Succeed())
		bindPolicy(ctx, ns, "binding", "prod", policySubject(root.Name))

		By("listing the hub's ConfigMaps of the policy's namespace that the selector selects, and copying their data as maps")
		Eventually(func() string { return rawOf(copiedTemplate(ctx, a, ns, root.Name, 0)()) }).Should(And(
			ContainSubstring("name: 'one'"), ContainSubstring(`data: {"a":"1"}`), Not(ContainSubstring("not-copied")), Not(ContainSubstring("{{hub"))))

		By("making the values set through if/else a number and a boolean, and reading the cluster's own ManagedCluster")
		def := firstDefinition(copiedTemplate(ctx, a, ns, root.Name, 1)())
		Expect(def).To(HaveKeyWithValue("spec", map[string]any{"replicas": float64(3), "paused": false}))
		Expect(def).To(HaveKeyWithValue("metadata", HaveKeyWithValue("labels", map[string]any{"cluster": a, "tier": "standard"})))
		Expect(hubTemplateError(ctx, a, ns, root.Name)()).To(BeEmpty())

		By("resolving again when an object the list selects appears")
		Expect(hubCP.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "two", Labels: copyLabel},
			Data: map[string]string{"c": "3"}})).To(Succeed())
		Eventually(func() string { return rawOf(copiedTemplate(ctx, a, ns, root.Name, 0)()) }).Should(And(
			ContainSubstring("name: 'one'"), ContainSubstring("name: 'two'"), ContainSubstring(`data: {"c":"3"}`)))
	})

	It("refuses, in OCM's words, a lookup outside the policy's namespace and of another cluster", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "plc-tpl-reach")
		a := newClusterName("plc-tpl-reach-a")
		createPolicyMember(ctx, a, set, map[string]string{"env": "prod"})
		prodPlacement(ctx, ns, "prod")
		other := configMapPolicy(ns, "other-ns", "other-ns", map[string]any{"x": `{{hub (lookup "v1" "Secret" "kube-system" "").items hub}}`})
		cluster := configMapPolicy(ns, "other-cluster", "other-cluster", map[string]any{
			"x": `{{hub (lookup "cluster.open-cluster-management.io/v1" "ManagedCluster" "" "some-other-cluster").metadata hub}}`})
		for _, p := range []*policyv1.Policy{other, cluster} {
			Expect(hubCP.Client.Create(ctx, p)).To(Succeed())
		}
		bindPolicy(ctx, ns, "binding", "prod", policySubject(other.Name), policySubject(cluster.Name))

		Eventually(hubTemplateError(ctx, a, ns, other.Name)).Should(ContainSubstring("the namespace argument is restricted to " + ns))
		Eventually(hubTemplateError(ctx, a, ns, cluster.Name)).Should(ContainSubstring(
			"lookup of cluster-scoped resource 'ManagedCluster/some-other-cluster' is not allowed"))
	})
})

var _ = Describe("Policy templates on the agent, as OCM orders them", Ordered, func() {
	var c *policyCluster

	BeforeAll(func(ctx SpecContext) {
		c = joinPolicyCluster(ctx)
	})

	It("checks a template's dependencies before its hub template error: Pending while they are unmet", func(ctx SpecContext) {
		root := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "policies", Name: "hub-error-pending"}}
		root.Spec.PolicyTemplates = append(root.Spec.PolicyTemplates, rawTemplate(`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy",`+
			`"metadata":{"name":"hub-error-pending-template","annotations":{"policy.open-cluster-management.io/hub-templates-error":"failed to resolve the template {}: boom"}},`+
			`"spec":{"remediationAction":"inform","object-templates":[{"complianceType":"musthave","objectDefinition":{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"x"}}}]}}`))
		root = withDependencies(root, policyDependency("hub-error-upstream", policyv1.Compliant))
		c.replicate(ctx, root)

		Eventually(c.latest(ctx, "policies.hub-error-pending", "hub-error-pending-template")).Should(Equal(
			"Pending; template-error; Dependencies were not satisfied: 1 is still pending (Policy policies.hub-error-upstream)"))
		Expect(c.policy(ctx, "policies.hub-error-pending").Status.ComplianceState).To(Equal(policyv1.Pending))
	})
})
