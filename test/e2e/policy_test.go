package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

var _ = Describe("Governance in the sandbox", func() {
	It("reports an inform policy NonCompliant, fixes the cluster once it enforces, brings a deleted object back, and removes the copies with the binding", func(ctx SpecContext) {
		dir, hub, onHub := startSandbox(ctx, 1)
		spoke := devClient(filepath.Join(dir, "cluster1", "admin.kubeconfig"))
		root := client.ObjectKey{Namespace: "policies", Name: "policy-namespace"}
		rootCompliance := func() policyv1.ComplianceState {
			p := &policyv1.Policy{}
			if err := hub.Get(ctx, root, p); err != nil {
				return ""
			}
			return p.Status.ComplianceState
		}

		By("binding the example policy, set to inform, to every cluster: it reports NonCompliant and changes nothing")
		example, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "examples", "policy-namespace.yaml"))
		Expect(err).NotTo(HaveOccurred())
		inform := strings.Replace(string(example), "remediationAction: enforce", "remediationAction: inform", 1)
		Expect(inform).NotTo(Equal(string(example)), "the example policy enforces")
		file := filepath.Join(GinkgoT().TempDir(), "policy-inform.yaml")
		Expect(os.WriteFile(file, []byte(inform), 0o600)).To(Succeed())
		Expect(onHub("clusterset", "bind", "global", "-n", "policies").code).To(Equal(0))
		res := onHub("create", "placement", "everywhere", "-n", "policies", "--clustersets", "global", "--wait")
		Expect(res.code).To(Equal(0), res.stderr)
		res = onHub("create", "policy", "-f", file, "--placement", "everywhere")
		Expect(res.code).To(Equal(0), res.stderr)
		Eventually(rootCompliance, 2*time.Minute).Should(Equal(policyv1.NonCompliant))
		res = onHub("describe", "policy", "policy-namespace", "-n", "policies")
		Expect(res.code).To(Equal(0), res.stderr)
		Expect(res.stdout).To(ContainSubstring("NonCompliant; violation - namespaces [prod] not found"))
		Expect(spoke.Get(ctx, client.ObjectKey{Name: "prod"}, &corev1.Namespace{})).To(Satisfy(apierrors.IsNotFound))

		By("switching it to enforce: the agent creates namespace prod and reports Compliant")
		Eventually(func() error {
			p := &policyv1.Policy{}
			if err := hub.Get(ctx, root, p); err != nil {
				return err
			}
			p.Spec.RemediationAction = policyv1.Enforce
			return hub.Update(ctx, p)
		}).Should(Succeed())
		Eventually(rootCompliance, 2*time.Minute).Should(Equal(policyv1.Compliant))
		prod := &corev1.Namespace{}
		Expect(spoke.Get(ctx, client.ObjectKey{Name: "prod"}, prod)).To(Succeed())

		By("deleting namespace prod on the cluster: the agent creates it again")
		Expect(spoke.Delete(ctx, prod)).To(Succeed())
		Eventually(func() types.UID {
			ns := &corev1.Namespace{}
			if err := spoke.Get(ctx, client.ObjectKey{Name: "prod"}, ns); err != nil || ns.Status.Phase != corev1.NamespaceActive {
				return prod.UID
			}
			return ns.UID
		}, 2*time.Minute).ShouldNot(Equal(prod.UID), "a new namespace prod, not the one being deleted")
		Eventually(rootCompliance, time.Minute).Should(Equal(policyv1.Compliant))

		By("removing the binding: the replicated policy goes from the cluster's namespace")
		copyKey := client.ObjectKey{Namespace: "cluster1", Name: "policies.policy-namespace"}
		Expect(hub.Get(ctx, copyKey, &policyv1.Policy{})).To(Succeed())
		bindings := &policyv1.PlacementBindingList{}
		Expect(hub.List(ctx, bindings, client.InNamespace("policies"))).To(Succeed())
		Expect(bindings.Items).To(HaveLen(1))
		Expect(hub.Delete(ctx, &bindings.Items[0])).To(Succeed())
		Eventually(func() error { return hub.Get(ctx, copyKey, &policyv1.Policy{}) }, time.Minute).Should(Satisfy(apierrors.IsNotFound))
	})
})
