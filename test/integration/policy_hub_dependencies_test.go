package integration

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

var _ = Describe("Policy propagation: dependencies on a PolicySet", func() {
	It("lists, in each copy, the set's policies in place of the set, and follows changes to the set", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "plc-dep")
		a := newClusterName("plc-dep-a")
		createPolicyMember(ctx, a, set, map[string]string{"env": "prod"})
		prodPlacement(ctx, ns, "prod")
		setDep := policyv1.PolicyDependency{APIVersion: "policy.open-cluster-management.io/v1beta1", Kind: policyv1.PolicySetKind, Name: "baseline", Compliance: policyv1.Compliant}
		root := rootPolicy(ns, "after-baseline")
		root.Spec.Dependencies = []policyv1.PolicyDependency{setDep}
		root.Spec.PolicyTemplates[0].ExtraDependencies = []policyv1.PolicyDependency{{
			APIVersion: "policy.open-cluster-management.io/v1beta1", Kind: policyv1.PolicySetKind, Name: "baseline", Compliance: policyv1.NonCompliant}}
		Expect(hubCP.Client.Create(ctx, root)).To(Succeed())
		bindPolicy(ctx, ns, "binding", "prod", policySubject(root.Name))
		name := ns + "." + root.Name
		deps := func() [][]policyv1.PolicyDependency {
			cp := getPolicy(ctx, a, name)
			return [][]policyv1.PolicyDependency{cp.Spec.Dependencies, cp.Spec.PolicyTemplates[0].ExtraDependencies}
		}
		policyDep := func(policy string, c policyv1.ComplianceState) policyv1.PolicyDependency {
			return policyv1.PolicyDependency{APIVersion: policyv1.GroupVersion.String(), Kind: policyv1.PolicyKind, Namespace: ns, Name: policy, Compliance: c}
		}

		By("keeping a dependency on a set the hub does not know, for the agent to report Pending")
		Eventually(copiesOf(ctx, ns, root.Name)).Should(Equal([]string{a}))
		Expect(deps()).To(Equal([][]policyv1.PolicyDependency{root.Spec.Dependencies, root.Spec.PolicyTemplates[0].ExtraDependencies}))

		By("listing the set's policies, with the compliance asked of the set, once it exists")
		Expect(hubCP.Client.Create(ctx, policySet(ns, "baseline", "one", "two"))).To(Succeed())
		Eventually(deps).Should(Equal([][]policyv1.PolicyDependency{
			{policyDep("one", policyv1.Compliant), policyDep("two", policyv1.Compliant)},
			{policyDep("one", policyv1.NonCompliant), policyDep("two", policyv1.NonCompliant)},
		}))

		By("following a policy taken out of the set")
		Eventually(func() error {
			s := getPolicySet(ctx, ns, "baseline")
			s.Spec.Policies = s.Spec.Policies[1:]
			return hubCP.Client.Update(ctx, s)
		}).Should(Succeed())
		Eventually(deps).Should(Equal([][]policyv1.PolicyDependency{
			{policyDep("two", policyv1.Compliant)},
			{policyDep("two", policyv1.NonCompliant)},
		}))
	})
})
