package integration

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

var _ = Describe("Policy propagation", func() {
	It("copies the example policy to exactly the chosen clusters, unchanged and labelled, and removes the copies when they stop being wanted", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "plc-hub")
		a, b, dev := newClusterName("plc-a"), newClusterName("plc-b"), newClusterName("plc-dev")
		createPolicyMember(ctx, a, set, map[string]string{"env": "prod"})
		createPolicyMember(ctx, b, set, map[string]string{"env": "prod"})
		createPolicyMember(ctx, dev, set, map[string]string{"env": "dev"})
		prodPlacement(ctx, ns, "prod")
		root := rootPolicy(ns, "policy-namespace")
		Expect(hubCP.Client.Create(ctx, root)).To(Succeed())
		bindPolicy(ctx, ns, "binding", "prod", policySubject(root.Name))
		name := ns + "." + root.Name

		By("copying it to the prod clusters only, with the contract's name, labels and annotations")
		Eventually(copiesOf(ctx, ns, root.Name)).Should(Equal(sorted(a, b)))
		for _, c := range []string{a, b} {
			cp := getPolicy(ctx, c, name)
			Expect(cp.Labels).To(And(
				HaveKeyWithValue(policyv1.ClusterNameLabel, c),
				HaveKeyWithValue(policyv1.ClusterNamespaceLabel, c),
				HaveKeyWithValue(policyv1.RootPolicyLabel, name)))
			Expect(cp.Annotations).To(Equal(root.Annotations))
			Expect(cp.Spec).To(Equal(examplePolicy().Spec), "the spec is copied unchanged, remediationAction included")
			Expect(cp.OwnerReferences).To(BeEmpty())
		}

		By("saying in the root's status which binding places it, on which clusters")
		Eventually(func() []policyv1.Placement { return getPolicy(ctx, ns, root.Name).Status.Placement }).Should(Equal(
			[]policyv1.Placement{{PlacementBinding: "binding", Placement: "prod"}}))
		Eventually(func() []policyv1.CompliancePerClusterStatus { return getPolicy(ctx, ns, root.Name).Status.Status }).Should(Equal(
			perCluster(policyv1.CompliancePerClusterStatus{ClusterName: a, ClusterNamespace: a}, policyv1.CompliancePerClusterStatus{ClusterName: b, ClusterNamespace: b})))

		By("putting back a copy edited on the hub")
		Eventually(func() error {
			cp := getPolicy(ctx, a, name)
			cp.Spec.RemediationAction = policyv1.Inform
			return hubCP.Client.Update(ctx, cp)
		}).Should(Succeed())
		Eventually(func() policyv1.RemediationAction { return getPolicy(ctx, a, name).Spec.RemediationAction }).Should(Equal(policyv1.Enforce))

		By("removing the copy of a cluster that leaves the decisions")
		relabelCluster(ctx, b, map[string]string{"env": "dev"})
		Eventually(copiesOf(ctx, ns, root.Name)).Should(Equal([]string{a}))

		By("adding the copy of a cluster that joins them")
		relabelCluster(ctx, dev, map[string]string{"env": "prod"})
		Eventually(copiesOf(ctx, ns, root.Name)).Should(Equal(sorted(a, dev)))

		By("removing every copy when the root is disabled, and copying again when enabled")
		setDisabled(ctx, ns, root.Name, true)
		Eventually(copiesOf(ctx, ns, root.Name)).Should(BeEmpty())
		setDisabled(ctx, ns, root.Name, false)
		Eventually(copiesOf(ctx, ns, root.Name)).Should(Equal(sorted(a, dev)))

		By("removing every copy when the binding goes")
		Expect(hubCP.Client.Delete(ctx, &policyv1.PlacementBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "binding"}})).To(Succeed())
		Eventually(copiesOf(ctx, ns, root.Name)).Should(BeEmpty())
		Eventually(func() []policyv1.Placement { return getPolicy(ctx, ns, root.Name).Status.Placement }).Should(BeEmpty())

		By("removing every copy when the root goes")
		bindPolicy(ctx, ns, "again", "prod", policySubject(root.Name))
		Eventually(copiesOf(ctx, ns, root.Name)).Should(Equal(sorted(a, dev)))
		Expect(hubCP.Client.Delete(ctx, root)).To(Succeed())
		Eventually(copiesOf(ctx, ns, root.Name)).Should(BeEmpty())
		Eventually(policyGone(ctx, ns, root.Name)).Should(BeTrue())
	})

	It("places the policies of a PolicySet bound to a Placement", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "plc-set")
		a := newClusterName("plc-set-a")
		createPolicyMember(ctx, a, set, map[string]string{"env": "prod"})
		prodPlacement(ctx, ns, "prod")
		Expect(hubCP.Client.Create(ctx, rootPolicy(ns, "one"))).To(Succeed())
		Expect(hubCP.Client.Create(ctx, rootPolicy(ns, "two"))).To(Succeed())
		Expect(hubCP.Client.Create(ctx, rootPolicy(ns, "outside"))).To(Succeed())
		Expect(hubCP.Client.Create(ctx, policySet(ns, "baseline", "one", "two"))).To(Succeed())
		bindPolicy(ctx, ns, "binding", "prod", policyv1.Subject{APIGroup: policyv1.GroupVersion.Group, Kind: policyv1.PolicySetKind, Name: "baseline"})
		Eventually(copiesOf(ctx, ns, "one")).Should(Equal([]string{a}))
		Eventually(copiesOf(ctx, ns, "two")).Should(Equal([]string{a}))
		Eventually(func() []policyv1.Placement { return getPolicy(ctx, ns, "one").Status.Placement }).Should(Equal(
			[]policyv1.Placement{{PlacementBinding: "binding", Placement: "prod", PolicySet: "baseline"}}))
		Consistently(copiesOf(ctx, ns, "outside"), "1s").Should(BeEmpty())

		By("removing the copies of a policy taken out of the set")
		Eventually(func() error {
			s := getPolicySet(ctx, ns, "baseline")
			s.Spec.Policies = s.Spec.Policies[:1]
			return hubCP.Client.Update(ctx, s)
		}).Should(Succeed())
		Eventually(copiesOf(ctx, ns, "two")).Should(BeEmpty())
		Expect(copiesOf(ctx, ns, "one")()).To(Equal([]string{a}))
	})
})

var _ = Describe("Policy propagation: root status", func() {
	It("rolls the clusters' compliance up into the root, and records an event on each change", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "plc-status")
		a, b := newClusterName("plc-st-a"), newClusterName("plc-st-b")
		createPolicyMember(ctx, a, set, map[string]string{"env": "prod"})
		createPolicyMember(ctx, b, set, map[string]string{"env": "prod"})
		prodPlacement(ctx, ns, "prod")
		root := rootPolicy(ns, "policy-namespace")
		Expect(hubCP.Client.Create(ctx, root)).To(Succeed())
		bindPolicy(ctx, ns, "binding", "prod", policySubject(root.Name))
		name := ns + "." + root.Name
		Eventually(copiesOf(ctx, ns, root.Name)).Should(Equal(sorted(a, b)))
		compliance := func() policyv1.ComplianceState { return getPolicy(ctx, ns, root.Name).Status.ComplianceState }

		By("leaving it empty until every cluster reported")
		reportCompliance(ctx, a, name, policyv1.Compliant, "Compliant; notification - namespaces [prod] found as specified")
		Eventually(func() []policyv1.CompliancePerClusterStatus { return getPolicy(ctx, ns, root.Name).Status.Status }).Should(ContainElement(
			policyv1.CompliancePerClusterStatus{ClusterName: a, ClusterNamespace: a, ComplianceState: policyv1.Compliant}))
		Expect(compliance()).To(BeEmpty())

		By("Compliant when all are")
		reportCompliance(ctx, b, name, policyv1.Compliant, "Compliant; notification - namespaces [prod] found as specified")
		Eventually(compliance).Should(Equal(policyv1.Compliant))

		By("Pending when one is pending, NonCompliant when one is not compliant")
		reportCompliance(ctx, b, name, policyv1.Pending, "Pending; template-error; dependencies are not satisfied")
		Eventually(compliance).Should(Equal(policyv1.Pending))
		reportCompliance(ctx, a, name, policyv1.NonCompliant, "NonCompliant; violation - namespaces [prod] not found")
		Eventually(compliance).Should(Equal(policyv1.NonCompliant))
		Expect(getPolicy(ctx, ns, root.Name).Status.Status).To(Equal(perCluster(
			policyv1.CompliancePerClusterStatus{ClusterName: a, ClusterNamespace: a, ComplianceState: policyv1.NonCompliant},
			policyv1.CompliancePerClusterStatus{ClusterName: b, ClusterNamespace: b, ComplianceState: policyv1.Pending})))

		By("recording each change as an event on the root")
		Eventually(rootEvents(ctx, ns, root.Name)).Should(ContainElements(
			ContainSubstring("compliance is Compliant (was unknown)"),
			ContainSubstring("compliance is Pending (was Compliant)"),
			ContainSubstring("compliance is NonCompliant (was Pending)")))
	})
})
