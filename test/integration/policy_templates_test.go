package integration

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

var _ = Describe("Policy hub templates", func() {
	It("resolves {{hub ... hub}} per cluster, and again when a ConfigMap or the cluster's labels change", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "plc-tpl")
		a, b := newClusterName("plc-tpl-a"), newClusterName("plc-tpl-b")
		createPolicyMember(ctx, a, set, map[string]string{"env": "prod", "region": "eu"})
		createPolicyMember(ctx, b, set, map[string]string{"env": "prod", "region": "us"})
		prodPlacement(ctx, ns, "prod")
		setConfigMap(ctx, ns, "site", map[string]string{"dns": "10.0.0.1"})
		dnsTemplate := `{{hub fromConfigMap "" "site" "dns" hub}}`
		root := configMapPolicy(ns, "site", "site-config", map[string]any{
			"cluster": "{{hub .ManagedClusterName hub}}",
			"region":  `{{hub index .ManagedClusterLabels "region" hub}}`,
			"dns":     dnsTemplate,
			"spoke":   `{{ fromClusterClaim "id.k8s.io" }}`,
		})
		Expect(hubCP.Client.Create(ctx, root)).To(Succeed())
		bindPolicy(ctx, ns, "binding", "prod", policySubject(root.Name))

		By("giving each cluster its own values, and leaving managed-cluster templates to the agent")
		Eventually(copiedData(ctx, a, ns, root.Name)).Should(Equal(map[string]any{
			"cluster": a, "region": "eu", "dns": "10.0.0.1", "spoke": `{{ fromClusterClaim "id.k8s.io" }}`}))
		Eventually(copiedData(ctx, b, ns, root.Name)).Should(Equal(map[string]any{
			"cluster": b, "region": "us", "dns": "10.0.0.1", "spoke": `{{ fromClusterClaim "id.k8s.io" }}`}))
		Expect(hubTemplateError(ctx, a, ns, root.Name)()).To(BeEmpty())
		Expect(templateObject(getPolicy(ctx, ns, root.Name), 0)).To(HaveKey("spec"), "the root keeps its templates")
		Expect(string(getPolicy(ctx, ns, root.Name).Spec.PolicyTemplates[0].ObjectDefinition.Raw)).To(ContainSubstring("{{hub"))

		By("writing a resolved copy once, not on every pass")
		rv := getPolicy(ctx, a, ns+"."+root.Name).ResourceVersion
		Consistently(func() string { return getPolicy(ctx, a, ns+"."+root.Name).ResourceVersion }, "2s").Should(Equal(rv))

		By("resolving again when the ConfigMap changes")
		setConfigMap(ctx, ns, "site", map[string]string{"dns": "10.0.0.2"})
		Eventually(copiedData(ctx, a, ns, root.Name)).Should(HaveKeyWithValue("dns", "10.0.0.2"))
		Eventually(copiedData(ctx, b, ns, root.Name)).Should(HaveKeyWithValue("dns", "10.0.0.2"))

		By("resolving again when a cluster's labels change")
		relabelCluster(ctx, a, map[string]string{"region": "apac"})
		Eventually(copiedData(ctx, a, ns, root.Name)).Should(HaveKeyWithValue("region", "apac"))
		Expect(copiedData(ctx, b, ns, root.Name)()).To(HaveKeyWithValue("region", "us"))

		By("keeping the template as written, marked with the error, when the ConfigMap goes")
		Expect(hubCP.Client.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "site"}})).To(Succeed())
		Eventually(hubTemplateError(ctx, a, ns, root.Name)).Should(And(
			HavePrefix("failed to resolve the template {"),
			ContainSubstring("failed getting the ConfigMap site from "+ns+`: configmaps "site" not found`)))
		Expect(copiedData(ctx, a, ns, root.Name)()).To(HaveKeyWithValue("dns", dnsTemplate), "never half-resolved")
		Eventually(rootEvents(ctx, ns, root.Name)).Should(ContainElement(And(
			ContainSubstring("policy template 0 for cluster "+a), ContainSubstring("failed getting the ConfigMap site"))))

		By("resolving once more when the ConfigMap is back")
		setConfigMap(ctx, ns, "site", map[string]string{"dns": "10.0.0.3"})
		Eventually(hubTemplateError(ctx, a, ns, root.Name)).Should(BeEmpty())
		Eventually(copiedData(ctx, b, ns, root.Name)).Should(HaveKeyWithValue("dns", "10.0.0.3"))
	})

	It("refuses to read a Secret outside the policy's namespace, and says so", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "plc-tpl-sec")
		a := newClusterName("plc-tpl-sec-a")
		createPolicyMember(ctx, a, set, map[string]string{"env": "prod"})
		prodPlacement(ctx, ns, "prod")
		root := configMapPolicy(ns, "steal", "steal-config", map[string]any{
			"token": `{{hub fromSecret "kube-system" "bootstrap-token" "token-secret" hub}}`,
		})
		Expect(hubCP.Client.Create(ctx, root)).To(Succeed())
		bindPolicy(ctx, ns, "binding", "prod", policySubject(root.Name))

		Eventually(hubTemplateError(ctx, a, ns, root.Name)).Should(ContainSubstring(
			"the namespace argument is restricted to " + ns + ": the Secret kube-system/bootstrap-token is out of reach, hub templates read only the namespace of the policy"))
		Expect(copiedData(ctx, a, ns, root.Name)()).To(HaveKeyWithValue("token", ContainSubstring("{{hub fromSecret")))
	})

	It("reports an unparsable hub template expression in the copy, never copying it resolved", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "plc-tpl-bad")
		a := newClusterName("plc-tpl-bad-a")
		createPolicyMember(ctx, a, set, map[string]string{"env": "prod"})
		prodPlacement(ctx, ns, "prod")
		root := configMapPolicy(ns, "bad", "bad-config", map[string]any{"x": `{{hub if .ManagedClusterName hub}}`})
		Expect(hubCP.Client.Create(ctx, root)).To(Succeed())
		bindPolicy(ctx, ns, "binding", "prod", policySubject(root.Name))

		Eventually(hubTemplateError(ctx, a, ns, root.Name)).Should(And(HavePrefix("failed to resolve the template {"), ContainSubstring("unexpected EOF")))
	})
})

var _ = Describe("Policy templates on the agent", Ordered, func() {
	var c *policyCluster

	BeforeAll(func(ctx SpecContext) {
		c = joinPolicyCluster(ctx)
	})

	It("reports a template the hub could not resolve as a template-error, with the hub's message", func(ctx SpecContext) {
		const msg = `failed to resolve the template {"x":"{{hub fromConfigMap \"\" \"gone\" \"k\" hub}}"}: failed to get the configmap gone from policies: not found`
		annotated, err := jsonString(msg)
		Expect(err).NotTo(HaveOccurred())
		root := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "policies", Name: "hub-error"}}
		root.Spec.PolicyTemplates = append(root.Spec.PolicyTemplates, rawTemplate(`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy",`+
			`"metadata":{"name":"hub-error-template","annotations":{"policy.open-cluster-management.io/hub-templates-error":`+annotated+`}},`+
			`"spec":{"remediationAction":"inform","object-templates":[{"complianceType":"musthave","objectDefinition":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"default"},"data":{"x":"{{hub fromConfigMap \"\" \"gone\" \"k\" hub}}"}}}]}}`))
		c.replicate(ctx, root)

		Eventually(c.latest(ctx, "policies.hub-error", "hub-error-template")).Should(Equal("NonCompliant; template-error; " + msg))
		Expect(c.policy(ctx, "policies.hub-error").Status.ComplianceState).To(Equal(policyv1.NonCompliant))
	})

	It("reports an object that is not a valid ConfigurationPolicy, and an unparsable expression, each with what is wrong", func(ctx SpecContext) {
		root := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "policies", Name: "bad-input"}}
		root.Spec.PolicyTemplates = append(root.Spec.PolicyTemplates,
			rawTemplate(`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","metadata":{"name":"bad-shape"},"spec":{"object-templates":"not a list"}}`),
			rawTemplate(`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","metadata":{"name":"bad-expression"},`+
				`"spec":{"remediationAction":"inform","object-templates":[{"complianceType":"musthave","objectDefinition":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"default"},"data":{"x":"{{ if true }}"}}}]}}`))
		c.replicate(ctx, root)

		Eventually(c.latest(ctx, "policies.bad-input", "bad-shape")).Should(Equal(
			"NonCompliant; template-error; Failed to create policy template: ConfigurationPolicy bad-shape at index 0: spec.object-templates: Invalid value: a string, want a list"))
		Eventually(c.latest(ctx, "policies.bad-input", "bad-expression")).Should(And(
			HavePrefix("NonCompliant; "), ContainSubstring("failed to parse the template")))
	})

	It("holds a template back as Pending until the policy it depends on is Compliant on the cluster, then evaluates it", func(ctx SpecContext) {
		first := configurationPolicy("dep-first", "dep-first-template", map[string]any{
			"remediationAction": "inform",
			"object-templates": []any{map[string]any{"complianceType": "musthave",
				"objectDefinition": map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "dep-base"}}}},
		})
		second := withDependencies(configurationPolicy("dep-second", "dep-second-template", map[string]any{
			"remediationAction": "inform",
			"object-templates": []any{map[string]any{"complianceType": "musthave",
				"objectDefinition": map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "dep-next"}}}},
		}), policyDependency("dep-first", policyv1.Compliant))
		c.replicate(ctx, second)

		By("saying Pending, in OCM's words, while the policy depended on does not exist")
		pending := "Pending; template-error; Dependencies were not satisfied: 1 is still pending (Policy policies.dep-first)"
		Eventually(c.latest(ctx, "policies.dep-second", "dep-second-template")).Should(Equal(pending))
		Expect(c.policy(ctx, "policies.dep-second").Status.ComplianceState).To(Equal(policyv1.Pending))

		By("still Pending while it is NonCompliant, with nothing on the spoke")
		c.replicate(ctx, first)
		Eventually(c.latest(ctx, "policies.dep-first", "dep-first-template")).Should(Equal("NonCompliant; violation - namespaces [dep-base] not found"))
		Consistently(c.latest(ctx, "policies.dep-second", "dep-second-template"), "2s").Should(Equal(pending))
		Expect(spokeGone(ctx, c.env.spoke, &policyv1.ConfigurationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: c.namespace, Name: "dep-second-template"}})()).To(BeTrue())

		By("evaluating it once the dependency is Compliant")
		c.setRemediation(ctx, "policies.dep-first", policyv1.Enforce)
		Eventually(c.latest(ctx, "policies.dep-first", "dep-first-template")).Should(HavePrefix("Compliant; "))
		Eventually(c.history(ctx, "policies.dep-second", "dep-second-template")).Should(Equal([]string{
			"NonCompliant; violation - namespaces [dep-next] not found", pending}))
		Expect(c.policy(ctx, "policies.dep-second").Status.ComplianceState).To(Equal(policyv1.NonCompliant))
		Expect(c.spokeTemplate(ctx, "dep-second-template").Labels).To(HaveKeyWithValue(policyv1.PolicyLabel, "policies.dep-second"))
	})
})

var _ = Describe("PolicySet status", func() {
	It("lists its bindings and rolls up the compliance of its policies, in OCM's words", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "plc-pset")
		a := newClusterName("plc-pset-a")
		createPolicyMember(ctx, a, set, map[string]string{"env": "prod"})
		prodPlacement(ctx, ns, "prod")
		Expect(hubCP.Client.Create(ctx, rootPolicy(ns, "one"))).To(Succeed())
		Expect(hubCP.Client.Create(ctx, rootPolicy(ns, "two"))).To(Succeed())
		Expect(hubCP.Client.Create(ctx, policySet(ns, "baseline", "one", "two"))).To(Succeed())
		bindPolicy(ctx, ns, "binding", "prod", policyv1.Subject{APIGroup: policyv1.GroupVersion.Group, Kind: policyv1.PolicySetKind, Name: "baseline"})
		Eventually(copiesOf(ctx, ns, "two")).Should(Equal([]string{a}))

		status := func() any { return getPolicySet(ctx, ns, "baseline").Status }
		By("awaiting status while no cluster reported")
		Eventually(status).Should(And(
			HaveField("Placement", ConsistOf(HaveField("PlacementBinding", "binding"))),
			HaveField("Placement", ConsistOf(HaveField("Placement", "prod"))),
			HaveField("Compliant", policyv1.ComplianceState("")),
			HaveField("StatusMessage", "No status provided while awaiting policy status: one, two")))

		By("Pending while one policy is, NonCompliant as soon as one is")
		reportCompliance(ctx, a, ns+".one", policyv1.Compliant, "Compliant; notification - namespaces [prod] found as specified")
		reportCompliance(ctx, a, ns+".two", policyv1.Pending, "Pending; template-error; Dependencies were not satisfied: 1 is still pending (Policy x.y)")
		Eventually(status).Should(And(HaveField("Compliant", policyv1.Pending), HaveField("StatusMessage", "Policies awaiting pending dependencies: two")))
		reportCompliance(ctx, a, ns+".two", policyv1.NonCompliant, "NonCompliant; violation - namespaces [prod] not found")
		Eventually(status).Should(And(HaveField("Compliant", policyv1.NonCompliant), HaveField("StatusMessage", "All policies are reporting status")))

		By("Compliant once every policy is")
		reportCompliance(ctx, a, ns+".two", policyv1.Compliant, "Compliant; notification - namespaces [prod] found as specified")
		Eventually(status).Should(HaveField("Compliant", policyv1.Compliant))

		By("naming a policy that was deleted, which no longer counts")
		Expect(hubCP.Client.Delete(ctx, getPolicy(ctx, ns, "two"))).To(Succeed())
		Eventually(status).Should(And(HaveField("Compliant", policyv1.Compliant), HaveField("StatusMessage", "Deleted policies: two")))
	})
})
