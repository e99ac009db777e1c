package policy

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

func TestRollUp(t *testing.T) {
	const (
		c = policyv1.Compliant
		n = policyv1.NonCompliant
		p = policyv1.Pending
	)
	tests := []struct {
		name     string
		clusters []policyv1.ComplianceState
		want     policyv1.ComplianceState
	}{
		{"no clusters", nil, ""},
		{"all compliant", []policyv1.ComplianceState{c, c}, c},
		{"one noncompliant wins over all", []policyv1.ComplianceState{c, p, n, ""}, n},
		{"pending wins over compliant", []policyv1.ComplianceState{c, p}, p},
		{"pending wins over unreported", []policyv1.ComplianceState{"", p}, p},
		{"a cluster not reported yet", []policyv1.ComplianceState{c, ""}, ""},
		{"none reported", []policyv1.ComplianceState{"", ""}, ""},
		{"an unknown state counts as unreported", []policyv1.ComplianceState{c, policyv1.Terminating}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RollUp(tt.clusters); got != tt.want {
				t.Errorf("RollUp(%v) = %q, want %q", tt.clusters, got, tt.want)
			}
		})
	}
}

func TestTemplateErrors(t *testing.T) {
	raw := func(s string) policyv1.PolicyTemplate {
		return policyv1.PolicyTemplate{ObjectDefinition: runtime.RawExtension{Raw: []byte(s)}}
	}
	root := &policyv1.Policy{Spec: policyv1.PolicySpec{PolicyTemplates: []policyv1.PolicyTemplate{
		raw(`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","metadata":{"name":"ok"},"spec":{"remediationAction":"inform","object-templates":[]}}`),
		raw(`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","metadata":{"name":"typo"},"spec":{"remediationAction":"inform","unknownField":1}}`),
		raw(`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","spec":{}}`),
		raw(`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","metadata":{"name":"hub"},"spec":{"remediationAction":"{{hub .X hub}}"}}`),
	}}}
	got := templateErrors(root)
	if len(got) != 2 {
		t.Fatalf("want the two invalid templates, got %+v", got)
	}
	if got[0].TemplateMeta.Name != "typo" || !strings.Contains(got[0].History[0].Message, `NonCompliant; template-error; Failed to create policy template: ConfigurationPolicy typo at index 1: strict decoding error: unknown field "spec.unknownField"`) {
		t.Errorf("unknown field: %+v", got[0])
	}
	if got[1].TemplateMeta.Name != "template-2" || got[1].History[0].Message != "NonCompliant; template-error; Failed to parse or get name from policy template at index 2" {
		t.Errorf("no name: %+v", got[1])
	}
}

func TestTemplateErrorsOfOtherKinds(t *testing.T) {
	raw := func(s string) policyv1.PolicyTemplate {
		return policyv1.PolicyTemplate{ObjectDefinition: runtime.RawExtension{Raw: []byte(s)}}
	}
	root := &policyv1.Policy{Spec: policyv1.PolicySpec{PolicyTemplates: []policyv1.PolicyTemplate{
		raw(`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"CertificatePolicy","metadata":{"name":"certs"},"spec":{"minimumDuration":"300h"}}`),
		raw(`{"apiVersion":"templates.gatekeeper.sh/v1","kind":"ConstraintTemplate","metadata":{"name":"k8srequiredlabels"},"spec":{}}`),
		raw(`{"apiVersion":"constraints.gatekeeper.sh/v1beta1","kind":"K8sRequiredLabels","metadata":{"name":"owner"},"spec":{}}`),
		raw(`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"OperatorPolicy","metadata":{"name":"operators"},"spec":{}}`),
	}}}
	got := templateErrors(root)
	if len(got) != 1 {
		t.Fatalf("want only the OperatorPolicy, which nothing evaluates, got %+v", got)
	}
	if got[0].TemplateMeta.Name != "operators" || !strings.Contains(got[0].History[0].Message,
		"policy templates of kind OperatorPolicy (policy.open-cluster-management.io/v1) are not supported: Flotilla evaluates ConfigurationPolicy and CertificatePolicy") {
		t.Errorf("unsupported kind: %+v", got[0])
	}
}
