package policy

import (
	"testing"

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
