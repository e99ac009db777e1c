package engine

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

// testCertificate is a self-signed PEM certificate valid from notBefore
// to notAfter.
func testCertificate(t *testing.T, notBefore, notAfter time.Time, ca bool, dns ...string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test"},
		NotBefore: notBefore, NotAfter: notAfter, IsCA: ca, BasicConstraintsValid: true, DNSNames: dns}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func secretObject(ns, name, cert string, labels map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": name, "namespace": ns, "labels": labels},
		"data":     map[string]any{"tls.crt": base64.StdEncoding.EncodeToString([]byte(cert))},
	}}
}

func namespaceObject(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
}

func certificateTemplate(t *testing.T, spec string) PolicyTemplate {
	t.Helper()
	p := &policyv1.Policy{}
	if err := yaml.Unmarshal([]byte(`
metadata: {name: p, namespace: policies}
spec:
  policy-templates:
  - objectDefinition:
      apiVersion: policy.open-cluster-management.io/v1
      kind: CertificatePolicy
      metadata: {name: certs}
      spec: `+spec), p); err != nil {
		t.Fatal(err)
	}
	pt := PolicyTemplates(p)[0]
	if pt.Err != nil || pt.CertificatePolicy == nil {
		t.Fatalf("decode: %v", pt.Err)
	}
	return pt
}

func TestCertificatePolicy(t *testing.T) {
	now := time.Now()
	soon := testCertificate(t, now.Add(-time.Hour), now.Add(10*time.Hour), false, "a.example.com")
	fine := testCertificate(t, now.Add(-time.Hour), now.Add(1000*time.Hour), false, "a.example.com")
	long := testCertificate(t, now.Add(-time.Hour), now.Add(20000*time.Hour), false, "a.example.com")
	caSoon := testCertificate(t, now.Add(-time.Hour), now.Add(30*time.Hour), true)
	wild := testCertificate(t, now.Add(-time.Hour), now.Add(1000*time.Hour), false, "*.example.com")
	for _, tc := range []struct {
		name, spec string
		objs       []*unstructured.Unstructured
		state      policyv1.ComplianceState
		msg        string
	}{
		{"expires too soon", "{namespaceSelector: {include: [ns1]}, minimumDuration: 300h}",
			[]*unstructured.Unstructured{namespaceObject("ns1"), secretObject("ns1", "s1", soon, nil), secretObject("ns1", "s2", fine, nil)},
			policyv1.NonCompliant, "NonCompliant; 1 certificates expire in less than 300h0m0s: ns1:s1"},
		{"default minimum of 672h", "{namespaceSelector: {include: [ns1]}}",
			[]*unstructured.Unstructured{namespaceObject("ns1"), secretObject("ns1", "s1", fine, nil)},
			policyv1.Compliant, "Compliant"},
		{"too long and a CA expiring, OCM's spacing", "{namespaceSelector: {include: [ns1]}, minimumDuration: 1h, minimumCADuration: 45h, maximumDuration: 9528h}",
			[]*unstructured.Unstructured{namespaceObject("ns1"), secretObject("ns1", "long", long, nil), secretObject("ns1", "ca", caSoon, nil)},
			policyv1.NonCompliant, "NonCompliant;  1 CA certificates expire in less than 45h0m0s: ns1:ca\n 1 certificates exceed the maximum duration of 9528h0m0s: ns1:long"},
		{"SAN patterns", "{namespaceSelector: {include: [ns1]}, minimumDuration: 1h, allowedSANPattern: '.*.example.com', disallowedSANPattern: '[\\*]'}",
			[]*unstructured.Unstructured{namespaceObject("ns1"), secretObject("ns1", "wild", wild, map[string]any{"certificate-name": "wildcard"}), secretObject("ns1", "ok", fine, nil)},
			policyv1.NonCompliant, "NonCompliant;  1 certificates defined SAN entries do not match pattern Allowed: .*.example.com Disallowed: [\\*]: ns1:wild"},
		{"label selector", "{namespaceSelector: {include: ['ns*']}, minimumDuration: 300h, labelSelector: {check: 'yes'}}",
			[]*unstructured.Unstructured{namespaceObject("ns1"), namespaceObject("ns2"), secretObject("ns1", "s1", soon, nil), secretObject("ns2", "s2", soon, map[string]any{"check": "yes"})},
			policyv1.NonCompliant, "NonCompliant; 1 certificates expire in less than 300h0m0s: ns2:s2"},
		{"no namespace selected", "{namespaceSelector: {include: [none]}}",
			[]*unstructured.Unstructured{namespaceObject("ns1"), secretObject("ns1", "s1", soon, nil)},
			policyv1.Compliant, "Compliant; No namespaces matched the namespace selector."},
		{"a Secret without a certificate is skipped", "{namespaceSelector: {include: [ns1]}}",
			[]*unstructured.Unstructured{namespaceObject("ns1"), secretObject("ns1", "s1", "not a certificate", nil)},
			policyv1.Compliant, "Compliant"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := EvaluateKind(context.Background(), certificateTemplate(t, tc.spec), NewObjectSet(tc.objs), now)
			if err != nil {
				t.Fatal(err)
			}
			if res.State != tc.state || res.Message != tc.msg {
				t.Errorf("got %s %q, want %s %q", res.State, res.Message, tc.state, tc.msg)
			}
		})
	}
}

func TestCertificatePolicyNext(t *testing.T) {
	now := time.Now()
	fine := testCertificate(t, now.Add(-time.Hour), now.Add(400*time.Hour), false)
	res, err := EvaluateKind(context.Background(), certificateTemplate(t, "{namespaceSelector: {include: [ns1]}, minimumDuration: 300h}"),
		NewObjectSet([]*unstructured.Unstructured{namespaceObject("ns1"), secretObject("ns1", "s1", fine, nil)}), now)
	if err != nil {
		t.Fatal(err)
	}
	// The certificate comes within 300h of its end in 100h: evaluated again then.
	if res.State != policyv1.Compliant || res.Next < 99*time.Hour || res.Next > 100*time.Hour {
		t.Errorf("got %s, next in %s", res.State, res.Next)
	}
}

func gatekeeperTemplates(t *testing.T, remediation string) []PolicyTemplate {
	t.Helper()
	p := &policyv1.Policy{}
	if err := yaml.Unmarshal([]byte(`
metadata: {name: p, namespace: policies}
spec:
  remediationAction: `+remediation+`
  policy-templates:
  - objectDefinition:
      apiVersion: templates.gatekeeper.sh/v1
      kind: ConstraintTemplate
      metadata: {name: k8srequiredlabels}
      spec: {crd: {spec: {names: {kind: K8sRequiredLabels}}}}
  - objectDefinition:
      apiVersion: constraints.gatekeeper.sh/v1beta1
      kind: K8sRequiredLabels
      metadata: {name: ns-must-have-owner}
      spec: {match: {kinds: [{apiGroups: [""], kinds: [Namespace]}]}}
`), p); err != nil {
		t.Fatal(err)
	}
	pts := PolicyTemplates(p)
	for _, pt := range pts {
		if pt.Err != nil || pt.Gatekeeper == nil {
			t.Fatalf("decode: %v", pt.Err)
		}
	}
	return pts
}

func gatekeeperObject(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func TestGatekeeper(t *testing.T) {
	ct := gatekeeperObject(t, "{apiVersion: templates.gatekeeper.sh/v1, kind: ConstraintTemplate, metadata: {name: k8srequiredlabels}, status: {created: true}}")
	violating := gatekeeperObject(t, `{apiVersion: constraints.gatekeeper.sh/v1beta1, kind: K8sRequiredLabels, metadata: {name: ns-must-have-owner},
  spec: {enforcementAction: warn}, status: {totalViolations: 2, violations: [
    {enforcementAction: warn, kind: Namespace, name: team-a, message: 'you must provide labels: {"owner"}'},
    {enforcementAction: warn, kind: Pod, namespace: team-b, name: web, message: 'missing owner'}]}}`)
	clean := gatekeeperObject(t, "{apiVersion: constraints.gatekeeper.sh/v1beta1, kind: K8sRequiredLabels, metadata: {name: ns-must-have-owner}, status: {totalViolations: 0}}")
	unaudited := gatekeeperObject(t, "{apiVersion: constraints.gatekeeper.sh/v1beta1, kind: K8sRequiredLabels, metadata: {name: ns-must-have-owner}}")
	deny := gatekeeperObject(t, "{apiVersion: constraints.gatekeeper.sh/v1beta1, kind: K8sRequiredLabels, metadata: {name: ns-must-have-owner}, spec: {enforcementAction: deny}, status: {totalViolations: 0}}")
	pts := gatekeeperTemplates(t, "inform")
	if got, _, _ := unstructured.NestedString(pts[1].Gatekeeper.Object, "spec", "enforcementAction"); got != "warn" {
		t.Errorf("inform sets the constraint's enforcementAction to warn, got %q", got)
	}
	if got, _, _ := unstructured.NestedString(gatekeeperTemplates(t, "enforce")[1].Gatekeeper.Object, "spec", "enforcementAction"); got != "deny" {
		t.Errorf("enforce sets the constraint's enforcementAction to deny, got %q", got)
	}
	for _, tc := range []struct {
		name  string
		t     PolicyTemplate
		objs  []*unstructured.Unstructured
		state policyv1.ComplianceState
		msg   string
	}{
		{"template created", pts[0], []*unstructured.Unstructured{ct}, policyv1.Compliant, "Compliant; ConstraintTemplate k8srequiredlabels was created successfully"},
		{"no Gatekeeper", pts[0], nil, policyv1.NonCompliant,
			`NonCompliant; template-error; Mapping not found, check if Gatekeeper is installed: no matches for kind "ConstraintTemplate" in version "templates.gatekeeper.sh/v1"`},
		{"template not created", pts[0], []*unstructured.Unstructured{gatekeeperObject(t, "{apiVersion: templates.gatekeeper.sh/v1, kind: ConstraintTemplate, metadata: {name: k8srequiredlabels}, status: {created: false}}")},
			policyv1.NonCompliant, "NonCompliant; template-error; Failed to create Gatekeeper ConstraintTemplate. Check the status of k8srequiredlabels."},
		{"violations", pts[1], []*unstructured.Unstructured{violating}, policyv1.NonCompliant,
			`NonCompliant; warn - you must provide labels: {"owner"} (on Namespace team-a); warn - missing owner (on Pod team-b/web)`},
		{"no violations", pts[1], []*unstructured.Unstructured{clean}, policyv1.Compliant, "Compliant; The constraint has no violations"},
		{"not audited yet", pts[1], []*unstructured.Unstructured{unaudited}, policyv1.Pending, "Pending; Gatekeeper's audit has not reported on K8sRequiredLabels ns-must-have-owner yet"},
		{"no constraint kind", pts[1], []*unstructured.Unstructured{ct}, policyv1.NonCompliant,
			`NonCompliant; template-error; Mapping not found, check if the required ConstraintTemplate has been deployed: no matches for kind "K8sRequiredLabels" in version "constraints.gatekeeper.sh/v1beta1"`},
		{"deny without the webhook", pts[1], []*unstructured.Unstructured{deny}, policyv1.NonCompliant,
			"NonCompliant; The Gatekeeper validating webhook is disabled but the constraint's spec.enforcementAction is deny. The constraint has no violations"},
		{"deny with the webhook", pts[1], []*unstructured.Unstructured{deny, gatekeeperObject(t, "{apiVersion: admissionregistration.k8s.io/v1, kind: ValidatingWebhookConfiguration, metadata: {name: "+GatekeeperWebhookName+"}}")},
			policyv1.Compliant, "Compliant; The constraint has no violations"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := EvaluateKind(context.Background(), tc.t, NewObjectSet(tc.objs), time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if res.State != tc.state || res.Message != tc.msg {
				t.Errorf("got %s %q, want %s %q", res.State, res.Message, tc.state, tc.msg)
			}
		})
	}
}
