package integration

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/agent/policy/engine"
	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

var _ = Describe("Policy agent", Ordered, func() {
	const (
		replicated = "policies.policy-namespace"
		template   = "policy-namespace-example"
		notFound   = "NonCompliant; violation - namespaces [prod] not found"
		created    = "Compliant; notification - namespaces [prod] was created successfully"
		found      = "Compliant; notification - namespaces [prod] found as specified"
	)
	var c *policyCluster

	BeforeAll(func(ctx SpecContext) {
		c = joinPolicyCluster(ctx)
	})

	It("reports the example policy in inform mode as NonCompliant, with OCM's message", func(ctx SpecContext) {
		By("replicating the example into the cluster namespace as the propagator would, in inform mode")
		root := examplePolicy()
		root.Spec.RemediationAction = policyv1.Inform
		c.replicate(ctx, root)

		By("reporting NonCompliant on the hub, with the exact message")
		Eventually(c.history(ctx, replicated, template)).Should(Equal([]string{notFound}))
		p := c.policy(ctx, replicated)
		Expect(p.Status.ComplianceState).To(Equal(policyv1.NonCompliant))
		Expect(p.Status.Details).To(HaveLen(1))
		Expect(p.Status.Details[0].ComplianceState).To(Equal(policyv1.NonCompliant))
		Expect(p.Status.Details[0].Results).NotTo(BeNil())
		Expect(p.Status.Details[0].Results.Objects).To(ConsistOf(policyv1.ObjectResult{
			ObjectTemplate: 0, Compliant: policyv1.NonCompliant, Reason: engine.ReasonNotFound,
			Object: policyv1.ObjectResource{APIVersion: "v1", Kind: "Namespace", Metadata: policyv1.ObjectMetadata{Name: "prod"}},
		}))

		By("keeping the ConfigurationPolicy on the spoke for everyone to see, with its status")
		cp := c.spokeTemplate(ctx, template)
		Expect(cp.Labels).To(HaveKeyWithValue(policyv1.PolicyLabel, replicated))
		Expect(cp.Spec.RemediationAction).To(Equal(policyv1.Inform))
		Expect(cp.Status.ComplianceState).To(Equal(policyv1.NonCompliant))
		Expect(cp.Status.CompliancyDetails).To(HaveLen(1))
		Expect(cp.Status.CompliancyDetails[0].Conditions).To(ConsistOf(And(
			HaveField("Type", "violation"), HaveField("Message", "namespaces [prod] not found"),
			HaveField("Reason", "K8s does not have a `must have` object"))))
		Expect(cp.Status.RelatedObjects).To(ConsistOf(And(
			HaveField("Object.Metadata.Name", "prod"), HaveField("Compliant", "NonCompliant"), HaveField("Reason", engine.ReasonNotFound))))

		By("changing nothing on the spoke")
		Expect(spokeGone(ctx, c.env.spoke, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "prod"}})()).To(BeTrue())

		By("agreeing with `flotilla policy test` run against the spoke's kubeconfig")
		res := flotilla(ctx, "policy", "test", sharedExample(examplePolicyName), "--against", c.env.spoke.AdminKubeconfig)
		Expect(res.Code).To(Equal(1), res.Stderr)
		Expect(res.Stdout).To(ContainSubstring(notFound))
	})

	It("creates namespace prod once switched to enforce, and reports Compliant", func(ctx SpecContext) {
		c.setRemediation(ctx, replicated, policyv1.Enforce)

		ns := &corev1.Namespace{}
		Eventually(func() error { return c.env.spoke.Client.Get(ctx, client.ObjectKey{Name: "prod"}, ns) }).Should(Succeed())
		Eventually(c.history(ctx, replicated, template)).Should(Equal([]string{found, created, notFound}))
		Expect(c.policy(ctx, replicated).Status.ComplianceState).To(Equal(policyv1.Compliant))

		cp := c.spokeTemplate(ctx, template)
		Expect(cp.Spec.RemediationAction).To(Equal(policyv1.Enforce), "the Policy's remediationAction overrides the template's")
		Expect(cp.Status.RelatedObjects).To(ConsistOf(And(
			HaveField("Object.Metadata.Name", "prod"), HaveField("Compliant", "Compliant"),
			HaveField("Properties.CreatedByPolicy", HaveValue(BeTrue())), HaveField("Properties.UID", string(ns.UID)))))

		res := flotilla(ctx, "policy", "test", sharedExample(examplePolicyName), "--against", c.env.spoke.AdminKubeconfig)
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(ContainSubstring(found))
	})

	It("brings namespace prod back when it is deleted, as soon as its watch tells", func(ctx SpecContext) {
		old := &corev1.Namespace{}
		Expect(c.env.spoke.Client.Get(ctx, client.ObjectKey{Name: "prod"}, old)).To(Succeed())
		Expect(c.env.spoke.Client.Delete(ctx, old)).To(Succeed())

		Eventually(func() types.UID {
			ns := &corev1.Namespace{}
			if err := c.env.spoke.Client.Get(ctx, client.ObjectKey{Name: "prod"}, ns); err != nil {
				return ""
			}
			return ns.UID
		}).Should(And(Not(BeEmpty()), Not(Equal(old.UID))))
		Eventually(c.latest(ctx, replicated, template)).Should(Equal(found))
		Expect(c.history(ctx, replicated, template)()).To(ContainElement(created))
	})

	It("keeps history newest first, at most 10 entries, one per change of message", func(ctx SpecContext) {
		const ns, name, tmpl = "policy-history", "policies.toggle", "toggle"
		createSpokeNamespace(ctx, c.env.spoke, ns)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "toggle", Namespace: ns}, Data: map[string]string{"v": "off"}}
		Expect(c.env.spoke.Client.Create(ctx, cm)).To(Succeed())
		c.replicate(ctx, configurationPolicy("toggle", tmpl, map[string]any{
			"remediationAction": "inform",
			"object-templates": []any{map[string]any{
				"complianceType":   "musthave",
				"objectDefinition": map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "toggle", "namespace": ns}, "data": map[string]any{"v": "on"}},
			}},
		}))
		compliant := fmt.Sprintf("Compliant; notification - configmaps [toggle] found as specified in namespace %s", ns)
		violation := fmt.Sprintf("NonCompliant; violation - configmaps [toggle] found but not as specified in namespace %s", ns)
		Eventually(c.latest(ctx, name, tmpl)).Should(Equal(violation))

		By("reporting the differing field in the structured results")
		d := c.policy(ctx, name).Status.Details[0]
		Expect(d.Results.Objects).To(ConsistOf(HaveField("Diffs", ConsistOf(policyv1.FieldDiff{Path: "data.v", Expected: `"on"`, Actual: `"off"`}))))

		By("toggling the ConfigMap twelve times")
		want := []string{violation}
		for i := range 12 {
			v, msg := "on", compliant
			if i%2 == 1 {
				v, msg = "off", violation
			}
			Eventually(func() error {
				before := cm.DeepCopy()
				cm.Data["v"] = v
				return c.env.spoke.Client.Patch(ctx, cm, client.MergeFrom(before))
			}).Should(Succeed())
			want = append([]string{msg}, want...)
			Eventually(c.history(ctx, name, tmpl)).Should(Equal(want[:min(len(want), engine.HistoryLimit)]))
		}
		h := c.policy(ctx, name).Status.Details[0].History
		Expect(h).To(HaveLen(engine.HistoryLimit))
		for i := 1; i < len(h); i++ {
			Expect(h[i].LastTimestamp.Time).NotTo(BeTemporally(">", h[i-1].LastTimestamp.Time), "history must be newest first")
		}
	})

	It("prunes what an enforced template created when its policy is removed (DeleteIfCreated)", func(ctx SpecContext) {
		const ns, name, tmpl = "policy-prune", "policies.prune", "prune"
		createSpokeNamespace(ctx, c.env.spoke, ns)
		kept := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept", Namespace: ns}}
		Expect(c.env.spoke.Client.Create(ctx, kept)).To(Succeed())
		objectTemplate := func(cm string) map[string]any {
			return map[string]any{
				"complianceType":   "musthave",
				"objectDefinition": map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": cm, "namespace": ns}, "data": map[string]any{"k": "v"}},
			}
		}
		c.replicate(ctx, configurationPolicy("prune", tmpl, map[string]any{
			"remediationAction":   "enforce",
			"pruneObjectBehavior": "DeleteIfCreated",
			"object-templates":    []any{objectTemplate("made"), objectTemplate("kept")},
		}))
		Eventually(c.latest(ctx, name, tmpl)).Should(Equal(fmt.Sprintf(
			"Compliant; notification - configmaps [made] found as specified in namespace %[1]s; notification - configmaps [kept] found as specified in namespace %[1]s", ns)))

		Expect(hubCP.Client.Delete(ctx, c.policy(ctx, name))).To(Succeed())
		Eventually(spokeGone(ctx, c.env.spoke, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "made", Namespace: ns}})).Should(BeTrue())
		Eventually(spokeGone(ctx, c.env.spoke, &policyv1.ConfigurationPolicy{ObjectMeta: metav1.ObjectMeta{Name: tmpl, Namespace: c.namespace}})).Should(BeTrue())
		Expect(c.env.spoke.Client.Get(ctx, client.ObjectKeyFromObject(kept), kept)).To(Succeed(), "an object the policy only updated is not pruned")
	})

	It("recreates an object whose immutable fields must change, with recreateOption IfRequired", func(ctx SpecContext) {
		const ns, name, tmpl = "policy-recreate", "policies.recreate", "recreate"
		createSpokeNamespace(ctx, c.env.spoke, ns)
		frozen := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "frozen", Namespace: ns}, Data: map[string]string{"v": "old"}, Immutable: ptr.To(true)}
		Expect(c.env.spoke.Client.Create(ctx, frozen)).To(Succeed())
		c.replicate(ctx, configurationPolicy("recreate", tmpl, map[string]any{
			"remediationAction": "enforce",
			"object-templates": []any{map[string]any{
				"complianceType":   "musthave",
				"recreateOption":   "IfRequired",
				"objectDefinition": map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "frozen", "namespace": ns}, "data": map[string]any{"v": "new"}},
			}},
		}))
		// Recreating leaves a moment in which the object is gone: poll through it.
		Eventually(func(g Gomega) map[string]string {
			cm := &corev1.ConfigMap{}
			g.Expect(c.env.spoke.Client.Get(ctx, client.ObjectKeyFromObject(frozen), cm)).To(Succeed())
			return cm.Data
		}).Should(Equal(map[string]string{"v": "new"}))
		Eventually(c.latest(ctx, name, tmpl)).Should(Equal("Compliant; notification - configmaps [frozen] found as specified in namespace " + ns))
		Expect(c.history(ctx, name, tmpl)()).To(ContainElement("Compliant; notification - configmaps [frozen] was updated successfully in namespace " + ns))
	})

	It("reports a policy template it cannot evaluate as a template-error", func(ctx SpecContext) {
		root := configurationPolicy("operators", "operators", map[string]any{})
		root.Spec.PolicyTemplates[0].ObjectDefinition.Raw = []byte(`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"OperatorPolicy","metadata":{"name":"operators"}}`)
		c.replicate(ctx, root)
		Eventually(c.latest(ctx, "policies.operators", "operators")).Should(Equal(
			"NonCompliant; template-error; policy templates of kind OperatorPolicy (policy.open-cluster-management.io/v1) are not supported: " +
				"Flotilla evaluates ConfigurationPolicy and CertificatePolicy (policy.open-cluster-management.io/v1), and Gatekeeper's ConstraintTemplate (templates.gatekeeper.sh) and constraints (constraints.gatekeeper.sh)"))
		Expect(c.policy(ctx, "policies.operators").Status.ComplianceState).To(Equal(policyv1.NonCompliant))
	})
})

var _ = Describe("Policy agent: hub RBAC", func() {
	It("lets an agent read its cluster's policies and report their status, and nothing of another cluster's", func(ctx SpecContext) {
		a, b := newClusterName("plc-a"), newClusterName("plc-b")
		for _, c := range []string{a, b} {
			createCluster(ctx, c)
			acceptCluster(ctx, c)
			Expect(hubCP.Client.Create(ctx, &policyv1.Policy{
				ObjectMeta: metav1.ObjectMeta{Name: "policies.p", Namespace: c},
				Spec:       policyv1.PolicySpec{PolicyTemplates: []policyv1.PolicyTemplate{}},
			})).To(Succeed())
		}
		agentA := crClient(agentConfig(ctx, a, "agent1"))

		By("letting A list, read and report its own")
		Eventually(func() error { return agentA.List(ctx, &policyv1.PolicyList{}, client.InNamespace(a)) }).Should(Succeed())
		own := &policyv1.Policy{}
		Expect(agentA.Get(ctx, client.ObjectKey{Namespace: a, Name: "policies.p"}, own)).To(Succeed())
		before := own.DeepCopy()
		own.Status.ComplianceState = policyv1.Compliant
		Expect(agentA.Status().Patch(ctx, own, client.MergeFrom(before))).To(Succeed())

		By("refusing A the policies of B")
		Expect(agentA.List(ctx, &policyv1.PolicyList{}, client.InNamespace(b))).To(beForbidden())
		other := &policyv1.Policy{}
		Expect(agentA.Get(ctx, client.ObjectKey{Namespace: b, Name: "policies.p"}, other)).To(beForbidden())
		Expect(hubCP.Client.Get(ctx, client.ObjectKey{Namespace: b, Name: "policies.p"}, other)).To(Succeed())
		before = other.DeepCopy()
		other.Status.ComplianceState = policyv1.Compliant
		Expect(agentA.Status().Patch(ctx, other, client.MergeFrom(before))).To(beForbidden())
	})
})
