package policy

import (
	"context"
	"errors"
	"slices"
	"testing"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

func TestUnmetDependencies(t *testing.T) {
	const api = "policy.open-cluster-management.io/v1"
	policy := func(ns, name string, c policyv1.ComplianceState) policyv1.PolicyDependency {
		return policyv1.PolicyDependency{APIVersion: api, Kind: policyv1.PolicyKind, Namespace: ns, Name: name, Compliance: c}
	}
	config := func(name string, c policyv1.ComplianceState) policyv1.PolicyDependency {
		return policyv1.PolicyDependency{APIVersion: api, Kind: policyv1.ConfigurationPolicyKind, Name: name, Compliance: c}
	}
	set := func(ns, name string) policyv1.PolicyDependency {
		return policyv1.PolicyDependency{APIVersion: "policy.open-cluster-management.io/v1beta1", Kind: policyv1.PolicySetKind, Namespace: ns, Name: name, Compliance: policyv1.Compliant}
	}
	// What the cluster reports, by the name a dependency is looked up by.
	cluster := map[string]policyv1.ComplianceState{
		"policies.operator":      policyv1.Compliant,
		"other.operator":         policyv1.NonCompliant,
		"policies.my-4.17-check": policyv1.Compliant,
		"scan-prerequisite":      policyv1.Compliant,
		"policies.silent":        "",
		// Were a PolicySet looked up, it would be found Compliant.
		"policies.base": policyv1.Compliant,
		"base":          policyv1.Compliant,
	}
	state := func(_ context.Context, _ policyv1.PolicyDependency, name string) (policyv1.ComplianceState, bool, error) {
		c, ok := cluster[name]
		return c, ok && c != "", nil
	}
	tests := []struct {
		name string
		deps []policyv1.PolicyDependency
		want []string
	}{
		{"none", nil, nil},
		{"met, the namespace being the root's", []policyv1.PolicyDependency{policy("", "operator", policyv1.Compliant)}, nil},
		{"compliance compared without case", []policyv1.PolicyDependency{policy("", "operator", "compliant")}, nil},
		{"wrong compliance in another namespace", []policyv1.PolicyDependency{policy("other", "operator", policyv1.Compliant)}, []string{"Policy other.operator"}},
		{"NonCompliant asked for and met", []policyv1.PolicyDependency{policy("other", "operator", policyv1.NonCompliant)}, nil},
		{"missing policy", []policyv1.PolicyDependency{policy("", "absent", policyv1.Compliant)}, []string{"Policy policies.absent"}},
		{"a policy that reported nothing yet", []policyv1.PolicyDependency{policy("", "silent", policyv1.Compliant)}, []string{"Policy policies.silent"}},
		{"a dotted name is namespace.name already", []policyv1.PolicyDependency{policy("", "policies.my-4.17-check", policyv1.Compliant)}, nil},
		{"a ConfigurationPolicy by its own name", []policyv1.PolicyDependency{config("scan-prerequisite", policyv1.Compliant)}, nil},
		{"several unmet, sorted and once each", []policyv1.PolicyDependency{
			policy("", "zeta", policyv1.Compliant), config("absent", policyv1.Compliant), policy("", "zeta", policyv1.Compliant), policy("", "operator", policyv1.Compliant),
		}, []string{"ConfigurationPolicy absent", "Policy policies.zeta"}},
		{"a PolicySet is never met", []policyv1.PolicyDependency{set("", "base")}, []string{"PolicySet policies.base"}},
		{"a PolicySet in another namespace, with a met policy", []policyv1.PolicyDependency{set("other", "base"), policy("", "operator", policyv1.Compliant)}, []string{"PolicySet other.base"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := unmetDependencies(context.Background(), tt.deps, "policies", state)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("unmetDependencies = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestUnmetDependenciesReadError(t *testing.T) {
	failing := func(context.Context, policyv1.PolicyDependency, string) (policyv1.ComplianceState, bool, error) {
		return "", false, errors.New("the hub is unreachable")
	}
	deps := []policyv1.PolicyDependency{{APIVersion: "policy.open-cluster-management.io/v1", Kind: policyv1.PolicyKind, Name: "a", Compliance: policyv1.Compliant}}
	if _, err := unmetDependencies(context.Background(), deps, "ns", failing); err == nil {
		t.Fatal("a read error must not count as met or unmet")
	}
}

func TestPendingMessage(t *testing.T) {
	tests := []struct {
		unmet     []string
		policySet bool
		want      string
	}{
		{[]string{"Policy default.policy-pod"}, false, "Pending; template-error; Dependencies were not satisfied: 1 is still pending (Policy default.policy-pod)"},
		{[]string{"ConfigurationPolicy a", "Policy ns.b"}, false, "Pending; template-error; Dependencies were not satisfied: 2 are still pending (ConfigurationPolicy a, Policy ns.b)"},
		{[]string{"PolicySet ns.base"}, true, "Pending; template-error; Dependencies were not satisfied: 1 is still pending (PolicySet ns.base); " +
			"the hub found no such PolicySet: it lists a set's policies in place of a dependency on the set, " +
			"and keeps a dependency on a set it cannot find; create the PolicySet or correct the dependency"},
	}
	for _, tt := range tests {
		if got := pendingMessage(tt.unmet, tt.policySet); got != tt.want {
			t.Errorf("pendingMessage(%q) = %q, want %q", tt.unmet, got, tt.want)
		}
	}
}
