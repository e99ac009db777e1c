package integration

import (
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

var _ = Describe("CLI create policy", func() {
	It("creates the example Policy bound to a Placement, and waits until its clusters comply", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "cli-cpl")
		a := newClusterName("cli-cpl-a")
		createPolicyMember(ctx, a, set, map[string]string{"env": "prod"})
		prodPlacement(ctx, ns, "prod")

		By("refusing to create without a placement")
		res := onHub(ctx, "create", "policy", "-f", sharedExample(examplePolicyName), "-n", ns)
		Expect(res.Code).NotTo(Equal(0))
		Expect(res.Stderr).To(ContainSubstring("--placement is required"))

		By("timing out, with what is missing, while no cluster reports")
		res = onHub(ctx, "create", "policy", "-f", sharedExample(examplePolicyName), "-n", ns,
			"--placement", "prod", "--wait", "--timeout", "3s")
		Expect(res.Code).NotTo(Equal(0))
		Expect(res.Stderr).To(ContainSubstring("Hub: Policy " + ns + "/policy-namespace bound to Placement prod"))
		Expect(res.Stderr).To(ContainSubstring("timed out after --timeout 3s waiting for Policy " + ns + "/policy-namespace to be Compliant"))

		By("having written the Policy unchanged and its binding")
		root := getPolicy(ctx, ns, "policy-namespace")
		Expect(root.Spec.RemediationAction).To(BeEquivalentTo("enforce"))
		binding := &policyv1.PlacementBinding{}
		Expect(hubCP.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "policy-namespace-prod"}, binding)).To(Succeed())
		Expect(binding.PlacementRef.Name).To(Equal("prod"))
		Expect(binding.Subjects).To(ConsistOf(HaveField("Name", "policy-namespace")))

		By("finishing once the cluster reports Compliant, as its agent would")
		name := ns + ".policy-namespace"
		Eventually(copiesOf(ctx, ns, "policy-namespace")).Should(Equal(sorted(a)))
		reportCompliance(ctx, a, name, policyv1.Compliant, "Compliant; notification - namespaces [prod] found as specified")
		res = onHub(ctx, "create", "policy", "-f", sharedExample(examplePolicyName), "-n", ns,
			"--placement", "prod", "--wait", "--timeout", "30s")
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stderr).To(ContainSubstring("Policy " + ns + "/policy-namespace is Compliant on " + a))
	})

	It("says when a file holds no Policy", func(ctx SpecContext) {
		file := filepath.Join(GinkgoT().TempDir(), "cm.yaml")
		Expect(os.WriteFile(file, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"), 0o600)).To(Succeed())
		res := onHub(ctx, "create", "policy", "-f", file, "--placement", "p")
		Expect(res.Code).NotTo(Equal(0))
		Expect(res.Stderr).To(ContainSubstring("holds no Policy"))
	})
})
