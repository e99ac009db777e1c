package engine

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

func TestPolicyTemplatesHubErrorsAndDependencies(t *testing.T) {
	dep := func(name string) policyv1.PolicyDependency {
		return policyv1.PolicyDependency{APIVersion: "policy.open-cluster-management.io/v1", Kind: "Policy", Name: name, Compliance: policyv1.Compliant}
	}
	raw := func(s string) policyv1.PolicyTemplate {
		return policyv1.PolicyTemplate{ObjectDefinition: runtime.RawExtension{Raw: []byte(s)}}
	}
	p := &policyv1.Policy{Spec: policyv1.PolicySpec{
		Dependencies: []policyv1.PolicyDependency{dep("base")},
		PolicyTemplates: []policyv1.PolicyTemplate{
			raw(`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","metadata":{"name":"a","annotations":{"policy.open-cluster-management.io/hub-templates-error":"failed to resolve the template {...}: boom"}},"spec":{}}`),
			raw(`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","metadata":{"name":"b","annotations":{"policy.open-cluster-management.io/hub-templates-error":""}},"spec":{}}`),
			{ObjectDefinition: runtime.RawExtension{Raw: []byte(`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","metadata":{"name":"c"},"spec":{}}`)},
				ExtraDependencies: []policyv1.PolicyDependency{dep("extra")}, IgnorePending: true},
		},
	}}
	got := PolicyTemplates(p)
	if len(got) != 3 {
		t.Fatalf("got %d templates, want 3", len(got))
	}
	if !got[0].HubTemplateError || got[0].Err == nil || got[0].Err.Error() != "failed to resolve the template {...}: boom" || got[0].Name != "a" {
		t.Errorf("template a = %+v, want the hub's error as it is", got[0])
	}
	if !got[1].HubTemplateError || got[1].Err == nil || got[1].Err.Error() == "" {
		t.Errorf("template b = %+v, want a hub error that still says something", got[1])
	}
	if got[2].Err != nil || got[2].HubTemplateError || got[2].ConfigurationPolicy == nil {
		t.Errorf("template c = %+v, want a valid template", got[2])
	}
	if len(got[0].Dependencies) != 1 || got[0].Dependencies[0].Name != "base" {
		t.Errorf("template a depends on %+v, want the policy's", got[0].Dependencies)
	}
	if len(got[2].Dependencies) != 2 || got[2].Dependencies[1].Name != "extra" || !got[2].IgnorePending {
		t.Errorf("template c depends on %+v (ignorePending %v), want the policy's and its extra one", got[2].Dependencies, got[2].IgnorePending)
	}
}
