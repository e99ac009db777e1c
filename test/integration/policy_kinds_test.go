package integration

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	"github.com/flotilla-io/flotilla/test/framework"
)

// pemCertificate is a self-signed certificate valid from notBefore to
// notAfter, in PEM.
func pemCertificate(notBefore, notAfter time.Time, dns ...string) []byte {
	GinkgoHelper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	Expect(err).NotTo(HaveOccurred())
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "policy-kinds"},
		NotBefore: notBefore, NotAfter: notAfter, DNSNames: dns, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	Expect(err).NotTo(HaveOccurred())
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// policyOf is a root Policy in namespace policies with the given templates.
func policyOf(name string, templates ...map[string]any) *policyv1.Policy {
	GinkgoHelper()
	p := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "policies"}}
	for _, t := range templates {
		raw, err := json.Marshal(t)
		Expect(err).NotTo(HaveOccurred())
		p.Spec.PolicyTemplates = append(p.Spec.PolicyTemplates, policyv1.PolicyTemplate{ObjectDefinition: runtime.RawExtension{Raw: raw}})
	}
	return p
}

// gatekeeperCRD is the minimal schema of a Gatekeeper kind, cluster-scoped
// with a status subresource: what Gatekeeper installs (the
// ConstraintTemplate kind) or makes from a ConstraintTemplate (a
// constraint kind). Gatekeeper itself is not here.
func gatekeeperCRD(group, version, kind, plural string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": plural + "." + group},
		"spec": map[string]any{
			"group": group, "scope": "Cluster",
			"names": map[string]any{"kind": kind, "listKind": kind + "List", "plural": plural, "singular": plural[:len(plural)-1]},
			"versions": []any{map[string]any{
				"name": version, "served": true, "storage": true,
				"subresources": map[string]any{"status": map[string]any{}},
				"schema":       map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
			}},
		},
	}}
}

// installCRD creates crd on spoke and waits until it is served.
func installCRD(ctx context.Context, spoke *framework.ControlPlane, crd *unstructured.Unstructured) {
	GinkgoHelper()
	Expect(spoke.Client.Create(ctx, crd)).To(Succeed())
	Eventually(func(g Gomega) {
		got := crd.DeepCopy()
		g.Expect(spoke.Client.Get(ctx, client.ObjectKeyFromObject(crd), got)).To(Succeed())
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		g.Expect(conds).To(ContainElement(And(HaveKeyWithValue("type", "Established"), HaveKeyWithValue("status", "True"))))
	}).Should(Succeed())
}

// setStatus writes obj's status on spoke, as its controller would.
func setStatus(ctx context.Context, spoke *framework.ControlPlane, obj *unstructured.Unstructured, status map[string]any) {
	GinkgoHelper()
	Eventually(func() error {
		live := obj.DeepCopy()
		if err := spoke.Client.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
			return err
		}
		live.Object["status"] = status
		return spoke.Client.Status().Update(ctx, live)
	}).Should(Succeed())
}

var _ = Describe("Policy agent: CertificatePolicy and Gatekeeper constraints, as OCM's framework evaluates them", func() {
	It("reports the certificates of Secrets that expire too soon, live and in `policy test`, and again once they are renewed", func(ctx SpecContext) {
		c := joinPolicyCluster(ctx)
		ns := newClusterName("certs")
		createSpokeNamespace(ctx, c.env.spoke, ns)
		now := time.Now()
		soon := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "soon"}, Type: corev1.SecretTypeOpaque,
			Data: map[string][]byte{"tls.crt": pemCertificate(now.Add(-time.Hour), now.Add(24*time.Hour), "soon.example.com")}}
		fine := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fine"}, Type: corev1.SecretTypeOpaque,
			Data: map[string][]byte{"tls.crt": pemCertificate(now.Add(-time.Hour), now.Add(2000*time.Hour), "fine.example.com")}}
		Expect(c.env.spoke.Client.Create(ctx, soon)).To(Succeed())
		Expect(c.env.spoke.Client.Create(ctx, fine)).To(Succeed())
		root := policyOf("certs", map[string]any{
			"apiVersion": policyv1.GroupVersion.String(), "kind": policyv1.CertificatePolicyKind,
			"metadata": map[string]any{"name": "cert-expiry"},
			"spec":     map[string]any{"namespaceSelector": map[string]any{"include": []any{ns}}, "minimumDuration": "300h", "severity": "low"},
		})
		c.replicate(ctx, root)
		want := "NonCompliant; 1 certificates expire in less than 300h0m0s: " + ns + ":soon"
		Eventually(c.latest(ctx, "policies.certs", "cert-expiry")).Should(Equal(want))
		Expect(c.policy(ctx, "policies.certs").Status.ComplianceState).To(Equal(policyv1.NonCompliant))

		By("keeping the CertificatePolicy on the spoke, in the cluster's namespace, with its status")
		cp := &policyv1.CertificatePolicy{}
		Eventually(func(g Gomega) {
			g.Expect(c.env.spoke.Client.Get(ctx, client.ObjectKey{Namespace: c.name, Name: "cert-expiry"}, cp)).To(Succeed())
			g.Expect(cp.Status.ComplianceState).To(Equal(policyv1.NonCompliant))
		}).Should(Succeed())
		Expect(cp.Status.CompliancyDetails[ns].NonCompliantCertificatesList).To(HaveKey("soon"))
		Expect(cp.Labels).To(HaveKeyWithValue(policyv1.PolicyLabel, "policies.certs"))

		By("`flotilla policy test` saying the same against the objects as files")
		dir := GinkgoT().TempDir()
		var docs []byte
		for _, o := range []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, soon, fine} {
			gvk, _ := c.env.spoke.Client.GroupVersionKindFor(o)
			o.GetObjectKind().SetGroupVersionKind(gvk)
			data, err := yaml.Marshal(o)
			Expect(err).NotTo(HaveOccurred())
			docs = append(append(docs, data...), []byte("---\n")...)
		}
		Expect(os.WriteFile(filepath.Join(dir, "objects.yaml"), docs, 0o600)).To(Succeed())
		policyFile := filepath.Join(GinkgoT().TempDir(), "policy.yaml")
		data, err := yaml.Marshal(root)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(policyFile, append([]byte("apiVersion: policy.open-cluster-management.io/v1\nkind: Policy\n"), data...), 0o600)).To(Succeed())
		run := runPolicyTest(ctx, policyFile, dir)
		Expect(run.messages).To(Equal(map[string]string{"cert-expiry": want}))
		Expect(run.code).NotTo(Equal(0))

		By("a renewed certificate making the policy compliant, through the watch of the Secrets")
		Eventually(func() error {
			live := &corev1.Secret{}
			if err := c.env.spoke.Client.Get(ctx, client.ObjectKeyFromObject(soon), live); err != nil {
				return err
			}
			live.Data["tls.crt"] = pemCertificate(now.Add(-time.Hour), now.Add(2000*time.Hour), "soon.example.com")
			return c.env.spoke.Client.Update(ctx, live)
		}).Should(Succeed())
		Eventually(c.latest(ctx, "policies.certs", "cert-expiry")).Should(Equal("Compliant"))
		Expect(c.history(ctx, "policies.certs", "cert-expiry")()).To(Equal([]string{"Compliant", want}))

		By("removing the template removing its CertificatePolicy")
		Expect(hubCP.Client.Delete(ctx, c.policy(ctx, "policies.certs"))).To(Succeed())
		Eventually(spokeGone(ctx, c.env.spoke, cp)).Should(BeTrue())
	})

	It("applies a ConstraintTemplate and its constraint and reports the constraint's audited violations (the test plays Gatekeeper)", func(ctx SpecContext) {
		c := joinPolicyCluster(ctx)
		// No Gatekeeper here: the test installs the CRD Gatekeeper installs,
		// and plays Gatekeeper below (the constraint CRD a ConstraintTemplate
		// makes, status.created, the audit's status). What is under test is
		// what the agent applies and reports.
		installCRD(ctx, c.env.spoke, gatekeeperCRD("templates.gatekeeper.sh", "v1", "ConstraintTemplate", "constrainttemplates"))
		root := policyOf("required-labels", map[string]any{
			"apiVersion": "templates.gatekeeper.sh/v1", "kind": "ConstraintTemplate",
			"metadata": map[string]any{"name": "k8srequiredlabels"},
			"spec": map[string]any{"crd": map[string]any{"spec": map[string]any{"names": map[string]any{"kind": "K8sRequiredLabels"}}},
				"targets": []any{map[string]any{"target": "admission.k8s.gatekeeper.sh", "rego": "package k8srequiredlabels\nviolation[{\"msg\": msg}] { false; msg := \"\" }"}}},
		}, map[string]any{
			"apiVersion": "constraints.gatekeeper.sh/v1beta1", "kind": "K8sRequiredLabels",
			"metadata": map[string]any{"name": "ns-must-have-owner"},
			"spec": map[string]any{"match": map[string]any{"kinds": []any{map[string]any{"apiGroups": []any{""}, "kinds": []any{"Namespace"}}}},
				"parameters": map[string]any{"labels": []any{"owner"}}},
		})
		root.Spec.RemediationAction = policyv1.Inform
		c.replicate(ctx, root)
		name := "policies.required-labels"

		ct := &unstructured.Unstructured{}
		ct.SetAPIVersion("templates.gatekeeper.sh/v1")
		ct.SetKind("ConstraintTemplate")
		ct.SetName("k8srequiredlabels")
		Eventually(func() error { return c.env.spoke.Client.Get(ctx, client.ObjectKeyFromObject(ct), ct) }).Should(Succeed())
		Expect(ct.GetLabels()).To(HaveKeyWithValue(policyv1.PolicyLabel, name))
		Eventually(c.latest(ctx, name, "ns-must-have-owner")).Should(HavePrefix(
			"NonCompliant; template-error; Mapping not found, check if the required ConstraintTemplate has been deployed"))

		By("Gatekeeper taking the ConstraintTemplate: its constraint kind, and status.created")
		installCRD(ctx, c.env.spoke, gatekeeperCRD("constraints.gatekeeper.sh", "v1beta1", "K8sRequiredLabels", "k8srequiredlabels"))
		setStatus(ctx, c.env.spoke, ct, map[string]any{"created": true})
		Eventually(c.latest(ctx, name, "k8srequiredlabels")).Should(Equal("Compliant; ConstraintTemplate k8srequiredlabels was created successfully"))
		constraint := &unstructured.Unstructured{}
		constraint.SetAPIVersion("constraints.gatekeeper.sh/v1beta1")
		constraint.SetKind("K8sRequiredLabels")
		constraint.SetName("ns-must-have-owner")
		Eventually(func() error { return c.env.spoke.Client.Get(ctx, client.ObjectKeyFromObject(constraint), constraint) }).Should(Succeed())
		action, _, _ := unstructured.NestedString(constraint.Object, "spec", "enforcementAction")
		Expect(action).To(Equal("warn"), "an inform Policy's constraint warns, as OCM's framework sets it")
		Eventually(c.latest(ctx, name, "ns-must-have-owner")).Should(Equal(
			"Pending; Gatekeeper's audit has not reported on K8sRequiredLabels ns-must-have-owner yet"))

		By("Gatekeeper's audit finding violations")
		setStatus(ctx, c.env.spoke, constraint, map[string]any{"totalViolations": int64(2), "violations": []any{
			map[string]any{"enforcementAction": "warn", "kind": "Namespace", "name": "team-a", "message": `you must provide labels: {"owner"}`, "version": "v1"},
			map[string]any{"enforcementAction": "warn", "kind": "Namespace", "name": "team-b", "message": `you must provide labels: {"owner"}`, "version": "v1"},
		}})
		Eventually(c.latest(ctx, name, "ns-must-have-owner")).Should(Equal(
			`NonCompliant; warn - you must provide labels: {"owner"} (on Namespace team-a); warn - you must provide labels: {"owner"} (on Namespace team-b)`))
		Expect(c.policy(ctx, name).Status.ComplianceState).To(Equal(policyv1.NonCompliant))

		By("and then none")
		setStatus(ctx, c.env.spoke, constraint, map[string]any{"totalViolations": int64(0), "violations": []any{}})
		Eventually(c.latest(ctx, name, "ns-must-have-owner")).Should(Equal("Compliant; The constraint has no violations"))
		Eventually(func() policyv1.ComplianceState { return c.policy(ctx, name).Status.ComplianceState }).Should(Equal(policyv1.Compliant))

		By("enforce making the constraint deny, which without Gatekeeper's webhook denies nothing")
		c.setRemediation(ctx, name, policyv1.Enforce)
		Eventually(c.latest(ctx, name, "ns-must-have-owner")).Should(Equal(
			"NonCompliant; The Gatekeeper validating webhook is disabled but the constraint's spec.enforcementAction is deny. The constraint has no violations"))

		By("removing the policy removing what it applied")
		Expect(hubCP.Client.Delete(ctx, c.policy(ctx, name))).To(Succeed())
		Eventually(spokeGone(ctx, c.env.spoke, constraint)).Should(BeTrue())
		Eventually(spokeGone(ctx, c.env.spoke, ct)).Should(BeTrue())
	})
})
