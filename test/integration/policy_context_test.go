package integration

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/agent/policy/engine"
	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

// Specs of what the agent resolves per object or renders itself: object
// template context variables, customMessage, and dependencies on a
// PolicySet, each as the hub sees it on the replicated policy.
var _ = Describe("Policy context variables and custom messages on the agent", Ordered, func() {
	var c *policyCluster

	BeforeAll(func(ctx SpecContext) {
		c = joinPolicyCluster(ctx)
	})

	// spokeConfigMapData returns, for Eventually, the data of a ConfigMap on the spoke.
	spokeConfigMapData := func(ctx context.Context, ns, name string) func() map[string]string {
		return func() map[string]string {
			cm := &corev1.ConfigMap{}
			if err := c.env.spoke.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cm); err != nil {
				return nil
			}
			return cm.Data
		}
	}

	It("renders customMessage for the noncompliant and then the compliant result on the hub", func(ctx SpecContext) {
		const name, tmpl, ns = "policies.custom-message", "custom-message-template", "custom-msg"
		createSpokeNamespace(ctx, c.env.spoke, ns)
		c.replicate(ctx, configurationPolicy("custom-message", tmpl, map[string]any{
			"remediationAction": "inform",
			"customMessage": map[string]any{
				"noncompliant": "{{ .Policy.metadata.name }} needs ConfigMap ready ({{ .DefaultMessage }})",
				"compliant":    "ready: {{ range .Policy.status.relatedObjects }}{{ .object.metadata.namespace }}/{{ .object.metadata.name }} {{ .reason }}{{ end }}",
			},
			"object-templates": []any{map[string]any{"complianceType": "musthave",
				"objectDefinition": map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": map[string]any{"name": "ready", "namespace": ns}, "data": map[string]any{"state": "ok"}}}},
		}))

		By("rendering the noncompliant template, around OCM's default message")
		noncompliant := "NonCompliant; custom-message-template needs ConfigMap ready (violation - configmaps [ready] not found in namespace custom-msg)"
		Eventually(c.latest(ctx, name, tmpl)).Should(Equal(noncompliant))
		Expect(c.policy(ctx, name).Status.ComplianceState).To(Equal(policyv1.NonCompliant))

		By("rendering the compliant template once the ConfigMap appears on the spoke")
		Expect(c.env.spoke.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ready"}, Data: map[string]string{"state": "ok"}})).To(Succeed())
		Eventually(c.history(ctx, name, tmpl)).Should(Equal([]string{"Compliant; ready: custom-msg/ready " + engine.ReasonFoundAsExpected, noncompliant}))
		p := c.policy(ctx, name)
		Expect(p.Status.ComplianceState).To(Equal(policyv1.Compliant))

		By("leaving the structured results as they are")
		Expect(p.Status.Details[0].Results).NotTo(BeNil())
		Expect(p.Status.Details[0].Results.Objects).To(ConsistOf(And(
			HaveField("Object.Metadata.Name", "ready"), HaveField("Compliant", policyv1.Compliant), HaveField("Reason", engine.ReasonFoundAsExpected))))
	})

	It("resolves .ObjectNamespace once per selected namespace, also in a namespace created later", func(ctx SpecContext) {
		const name, tmpl = "policies.per-namespace", "per-namespace-template"
		createSpokeNamespace(ctx, c.env.spoke, "ctx-a")
		createSpokeNamespace(ctx, c.env.spoke, "ctx-b")
		c.replicate(ctx, configurationPolicy("per-namespace", tmpl, map[string]any{
			"remediationAction": "enforce",
			"namespaceSelector": map[string]any{"include": []any{"ctx-*"}},
			"object-templates": []any{map[string]any{"complianceType": "musthave",
				"objectDefinition": map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": map[string]any{"name": "{{ .ObjectNamespace }}-owner"},
					"data":     map[string]any{"owner": "{{ .ObjectNamespace }}"}}}},
		}))

		By("creating each namespace's own ConfigMap, with its own values")
		Eventually(spokeConfigMapData(ctx, "ctx-a", "ctx-a-owner")).Should(Equal(map[string]string{"owner": "ctx-a"}))
		Eventually(spokeConfigMapData(ctx, "ctx-b", "ctx-b-owner")).Should(Equal(map[string]string{"owner": "ctx-b"}))
		Eventually(c.latest(ctx, name, tmpl)).Should(Equal("Compliant; notification - configmaps [ctx-a-owner] found as specified in namespace ctx-a; " +
			"configmaps [ctx-b-owner] found as specified in namespace ctx-b"))
		results := c.policy(ctx, name).Status.Details[0].Results
		Expect(results).NotTo(BeNil())
		Expect(results.Objects).To(ConsistOf(
			And(HaveField("Object.Metadata.Namespace", "ctx-a"), HaveField("Object.Metadata.Name", "ctx-a-owner"), HaveField("Compliant", policyv1.Compliant)),
			And(HaveField("Object.Metadata.Namespace", "ctx-b"), HaveField("Object.Metadata.Name", "ctx-b-owner"), HaveField("Compliant", policyv1.Compliant))))

		By("resolving it for a namespace that the selector selects later")
		createSpokeNamespace(ctx, c.env.spoke, "ctx-c")
		Eventually(spokeConfigMapData(ctx, "ctx-c", "ctx-c-owner")).Should(Equal(map[string]string{"owner": "ctx-c"}))
	})

	It("resolves .ObjectName and .Object per object an objectSelector selects, and follows the objects' changes", func(ctx SpecContext) {
		const name, tmpl, ns = "policies.per-object", "per-object-template", "ctx-select"
		createSpokeNamespace(ctx, c.env.spoke, ns)
		for cmName, copyLabel := range map[string]string{"alpha": "alpha", "beta": "wrong"} {
			Expect(c.env.spoke.Client.Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cmName, Labels: map[string]string{"app": "x", "copy": copyLabel}},
				Data:       map[string]string{"port": "80"},
			})).To(Succeed())
		}
		c.replicate(ctx, configurationPolicy("per-object", tmpl, map[string]any{
			"remediationAction": "inform",
			"namespaceSelector": map[string]any{"include": []any{ns}},
			"object-templates": []any{map[string]any{"complianceType": "musthave",
				"objectSelector": map[string]any{"matchLabels": map[string]any{"app": "x"}},
				"objectDefinition": map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": map[string]any{"labels": map[string]any{"copy": "{{ .ObjectName }}"}},
					"data":     map[string]any{"port": "{{ .Object.data.port }}"}}}},
		}))

		By("reporting only the object whose label is not its own name")
		violation := "NonCompliant; violation - configmaps [beta] found but not as specified in namespace ctx-select"
		Eventually(c.latest(ctx, name, tmpl)).Should(Equal(violation))
		Expect(c.policy(ctx, name).Status.Details[0].Results.Objects).To(ConsistOf(
			And(HaveField("Object.Metadata.Name", "alpha"), HaveField("Compliant", policyv1.Compliant)),
			And(HaveField("Object.Metadata.Name", "beta"), HaveField("Compliant", policyv1.NonCompliant))))

		By("becoming Compliant once that object is fixed on the spoke")
		Eventually(func() error {
			cm := &corev1.ConfigMap{}
			if err := c.env.spoke.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "beta"}, cm); err != nil {
				return err
			}
			cm.Labels["copy"] = "beta"
			return c.env.spoke.Client.Update(ctx, cm)
		}).Should(Succeed())
		Eventually(c.history(ctx, name, tmpl)).Should(Equal([]string{
			"Compliant; notification - configmaps [alpha, beta] found as specified in namespace ctx-select", violation}))
	})

	It("holds a template that depends on a PolicySet as Pending, saying that the hub found no such set", func(ctx SpecContext) {
		const name, tmpl = "policies.after-set", "after-set-template"
		c.replicate(ctx, withDependencies(configurationPolicy("after-set", tmpl, map[string]any{
			"remediationAction": "inform",
			"object-templates": []any{map[string]any{"complianceType": "musthave",
				"objectDefinition": map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "after-set"}}}},
		}), policyv1.PolicyDependency{APIVersion: "policy.open-cluster-management.io/v1beta1", Kind: policyv1.PolicySetKind,
			Name: "base-set", Compliance: policyv1.Compliant}))

		Eventually(c.latest(ctx, name, tmpl)).Should(Equal("Pending; template-error; Dependencies were not satisfied: 1 is still pending (PolicySet policies.base-set); " +
			"the hub found no such PolicySet: it lists a set's policies in place of a dependency on the set, " +
			"and keeps a dependency on a set it cannot find; create the PolicySet or correct the dependency"))
		Expect(c.policy(ctx, name).Status.ComplianceState).To(Equal(policyv1.Pending))
		Expect(spokeGone(ctx, c.env.spoke, &policyv1.ConfigurationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: c.namespace, Name: tmpl}})()).To(BeTrue())
	})
})
