package integration

import (
	"encoding/json"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

var _ = Describe("CLI get policies", func() {
	It("lists root policies with their compliance, as a grid, and describes one per cluster", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "cli-plc")
		a, b := newClusterName("cli-plc-a"), newClusterName("cli-plc-b")
		createPolicyMember(ctx, a, set, map[string]string{"env": "prod"})
		createPolicyMember(ctx, b, set, map[string]string{"env": "prod"})
		prodPlacement(ctx, ns, "prod")
		Expect(hubCP.Client.Create(ctx, rootPolicy(ns, "policy-namespace"))).To(Succeed())
		Expect(hubCP.Client.Create(ctx, rootPolicy(ns, "unbound"))).To(Succeed())
		bindPolicy(ctx, ns, "binding", "prod", policySubject("policy-namespace"))
		name := ns + ".policy-namespace"
		Eventually(copiesOf(ctx, ns, "policy-namespace")).Should(Equal(sorted(a, b)))
		reportCompliance(ctx, a, name, policyv1.Compliant, "Compliant; notification - namespaces [prod] found as specified")
		reportCompliance(ctx, b, name, policyv1.NonCompliant, "NonCompliant; violation - namespaces [prod] not found")
		Eventually(func() policyv1.ComplianceState { return getPolicy(ctx, ns, "policy-namespace").Status.ComplianceState }).Should(Equal(policyv1.NonCompliant))

		By("listing the namespace's root policies, not their copies")
		res := onHub(ctx, "get", "policies", "-n", ns)
		Expect(res.Code).To(Equal(0), res.Stderr)
		lines := strings.Split(strings.TrimSpace(res.Stdout), "\n")
		Expect(lines).To(HaveLen(3))
		Expect(lines[0]).To(MatchRegexp(`^NAME\s+REMEDIATION\s+COMPLIANT\s+CLUSTERS$`))
		Expect(lines[1]).To(MatchRegexp(`^policy-namespace\s+enforce\s+NonCompliant\s+1/2$`))
		Expect(lines[2]).To(MatchRegexp(`^unbound\s+enforce\s+-\s+0/0$`))

		By("adding NAMESPACE across namespaces")
		res = onHub(ctx, "get", "policies")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(MatchRegexp(`NAMESPACE\s+NAME\s+REMEDIATION\s+COMPLIANT\s+CLUSTERS`))
		Expect(res.Stdout).To(MatchRegexp(ns + `\s+policy-namespace\s+enforce\s+NonCompliant\s+1/2`))
		Expect(res.Stdout).NotTo(ContainSubstring(name))

		By("showing clusters by policies")
		res = onHub(ctx, "get", "policies", "-n", ns, "--matrix")
		Expect(res.Code).To(Equal(0), res.Stderr)
		lines = strings.Split(strings.TrimSpace(res.Stdout), "\n")
		Expect(lines).To(HaveLen(3))
		Expect(lines[0]).To(MatchRegexp(`^CLUSTER\s+policy-namespace\s+unbound$`))
		Expect(lines).To(ContainElements(MatchRegexp(`^`+a+`\s+Compliant\s+-$`), MatchRegexp(`^`+b+`\s+NonCompliant\s+-$`)))

		By("printing the objects as JSON")
		res = onHub(ctx, "get", "policies", "-n", ns, "-o", "json")
		Expect(res.Code).To(Equal(0), res.Stderr)
		list := policyv1.PolicyList{}
		Expect(json.Unmarshal([]byte(res.Stdout), &list)).To(Succeed())
		Expect(list.Items).To(HaveLen(2))
		Expect(list.Items[0].Status.Status).To(HaveLen(2))

		By("describing one policy per cluster, with each cluster's latest message")
		res = onHub(ctx, "describe", "policy", "policy-namespace", "-n", ns)
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(ContainSubstring("Compliant:    NonCompliant"))
		Expect(res.Stdout).To(ContainSubstring("PlacementBinding binding -> Placement prod"))
		Expect(res.Stdout).To(MatchRegexp(a + `\s+Compliant\s+Compliant; notification - namespaces \[prod\] found as specified`))
		Expect(res.Stdout).To(MatchRegexp(b + `\s+NonCompliant\s+NonCompliant; violation - namespaces \[prod\] not found`))

		By("saying what is missing")
		res = onHub(ctx, "describe", "policy", "nope", "-n", ns)
		Expect(res.Code).To(Equal(1))
		Expect(res.Stderr).To(ContainSubstring("Policy nope not found in namespace " + ns))
	})
})
