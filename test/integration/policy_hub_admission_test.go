package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	"github.com/flotilla-io/flotilla/hub/policy"
)

// policyObject is the example Policy in ns as a map, to add fields to.
func policyObject(ns, name string) *unstructured.Unstructured {
	GinkgoHelper()
	p := rootPolicy(ns, name)
	p.APIVersion, p.Kind = policyv1.GroupVersion.String(), policyv1.PolicyKind
	data, err := json.Marshal(p)
	Expect(err).NotTo(HaveOccurred())
	u := &unstructured.Unstructured{}
	Expect(json.Unmarshal(data, &u.Object)).To(Succeed())
	unstructured.RemoveNestedField(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	return u
}

var _ = Describe("Policy admission", func() {
	It("propagates a policy whose namespace and name are 62 characters together", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "plc-adm62")
		a := newClusterName("plc-adm62-a")
		createPolicyMember(ctx, a, set, map[string]string{"env": "prod"})
		prodPlacement(ctx, ns, "prod")
		name := strings.Repeat("x", 62-len(ns)) // its copies' "<ns>.<name>" is 63 characters
		Expect(hubCP.Client.Create(ctx, rootPolicy(ns, name))).To(Succeed())
		bindPolicy(ctx, ns, "binding", "prod", policySubject(name))
		Eventually(copiesOf(ctx, ns, name)).Should(Equal([]string{a}))
		Expect(getPolicy(ctx, ns, name).Status.Details).To(BeEmpty())
	})

	It("refuses a new root policy whose namespace and name exceed 62 characters, saying the limit and the lengths", func(ctx SpecContext) {
		ns := newNamespace(ctx, "plc-adm63")
		name := strings.Repeat("y", 63-len(ns))
		err := hubCP.Client.Create(ctx, rootPolicy(ns, name))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring(`admission webhook "` + policy.WebhookName + `" denied the request: Policy ` + ns + "/" + name + " is refused: " +
			"its namespace and name are 63 characters together (namespace " + strconv.Itoa(len(ns)) + ", name " + strconv.Itoa(len(name)) + "), the most is 62"))
		Expect(apierrors.IsNotFound(hubCP.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &policyv1.Policy{}))).To(BeTrue())
	})

	It("refuses a Policy with a field its schema does not know, naming the field, whatever field validation the client asks for", func(ctx SpecContext) {
		ns := newNamespace(ctx, "plc-adm-fields")
		for _, tc := range []struct {
			name  string
			add   func(u *unstructured.Unstructured)
			field string
			opts  []client.CreateOption
		}{
			{"spec-typo", func(u *unstructured.Unstructured) {
				Expect(unstructured.SetNestedField(u.Object, "enforce", "spec", "remediationactions")).To(Succeed())
			}, "spec.remediationactions", nil},
			{"top-level", func(u *unstructured.Unstructured) {
				u.Object["labels"] = map[string]any{"env": "prod"}
			}, "labels", []client.CreateOption{client.FieldValidation("Strict")}},
			{"in-a-template", func(u *unstructured.Unstructured) {
				templates, _, _ := unstructured.NestedSlice(u.Object, "spec", "policy-templates")
				templates[0].(map[string]any)["ignorePendng"] = true
				Expect(unstructured.SetNestedSlice(u.Object, templates, "spec", "policy-templates")).To(Succeed())
			}, "spec.policy-templates[0].ignorePendng", []client.CreateOption{client.FieldValidation("Ignore")}},
		} {
			By("refusing " + tc.field)
			u := policyObject(ns, tc.name)
			tc.add(u)
			err := hubCP.Client.Create(ctx, u, tc.opts...)
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
			Expect(err.Error()).To(ContainSubstring(`Policy ` + ns + "/" + tc.name + ` is refused: strict decoding error: unknown field "` + tc.field + `"`))
			Expect(apierrors.IsNotFound(hubCP.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: tc.name}, &policyv1.Policy{}))).To(BeTrue())
		}

		By("refusing a field added by an update")
		Expect(hubCP.Client.Create(ctx, policyObject(ns, "good"))).To(Succeed())
		// The hub adds its finalizer meanwhile: update the latest version.
		var err error
		Eventually(func() bool {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(policyv1.GroupVersion.WithKind(policyv1.PolicyKind))
			Expect(hubCP.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "good"}, u)).To(Succeed())
			Expect(unstructured.SetNestedField(u.Object, true, "spec", "disable")).To(Succeed())
			err = hubCP.Client.Update(ctx, u)
			return apierrors.IsConflict(err)
		}).Should(BeFalse())
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring(`unknown field "spec.disable"`))

		By("refusing it in flotilla create policy -f, before writing anything")
		data, err := os.ReadFile(sharedExample(examplePolicyName))
		Expect(err).NotTo(HaveOccurred())
		file := filepath.Join(GinkgoT().TempDir(), "typo.yaml")
		Expect(os.WriteFile(file, []byte(strings.Replace(string(data), "remediationAction:", "remediationActoin:", 1)), 0o600)).To(Succeed())
		res := onHub(ctx, "create", "policy", "-f", file, "-n", ns, "--placement", "prod")
		Expect(res.Code).NotTo(Equal(0), res.Stderr)
		Expect(res.Stderr).To(ContainSubstring(`typo.yaml: Policy policy-namespace: strict decoding error: unknown field "spec.remediationActoin"`))
		Expect(apierrors.IsNotFound(hubCP.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "policy-namespace"}, &policyv1.Policy{}))).To(BeTrue())
	})
})
