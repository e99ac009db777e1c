package policy

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

func TestSetCompliance(t *testing.T) {
	member := func(state policyv1.ComplianceState, disabled bool) *policyv1.Policy {
		return &policyv1.Policy{Spec: policyv1.PolicySpec{Disabled: disabled}, Status: policyv1.PolicyStatus{ComplianceState: state}}
	}
	tests := []struct {
		name        string
		members     map[string]*policyv1.Policy
		names       []policyv1.NonEmptyString
		wantState   policyv1.ComplianceState
		wantMessage string
	}{
		{"all compliant", map[string]*policyv1.Policy{"a": member(policyv1.Compliant, false), "b": member(policyv1.Compliant, false)},
			[]policyv1.NonEmptyString{"a", "b"}, policyv1.Compliant, "All policies are reporting status"},
		{"one noncompliant wins over pending", map[string]*policyv1.Policy{"a": member(policyv1.Pending, false), "b": member(policyv1.NonCompliant, false)},
			[]policyv1.NonEmptyString{"a", "b"}, policyv1.NonCompliant, "Policies awaiting pending dependencies: a"},
		{"pending over compliant", map[string]*policyv1.Policy{"a": member(policyv1.Pending, false), "b": member(policyv1.Compliant, false)},
			[]policyv1.NonEmptyString{"a", "b"}, policyv1.Pending, "Policies awaiting pending dependencies: a"},
		{"unknown leaves the roll-up unknown", map[string]*policyv1.Policy{"a": member("", false), "b": member(policyv1.Compliant, false)},
			[]policyv1.NonEmptyString{"a", "b"}, "", "No status provided while awaiting policy status: a"},
		{"disabled and deleted do not count", map[string]*policyv1.Policy{"a": member(policyv1.NonCompliant, true), "c": member(policyv1.Compliant, false)},
			[]policyv1.NonEmptyString{"a", "b", "c"}, policyv1.Compliant, "Disabled policies: a; Deleted policies: b"},
		{"only deleted", map[string]*policyv1.Policy{},
			[]policyv1.NonEmptyString{"a"}, "", "Deleted policies: a"},
		{"every reason, in OCM's order", map[string]*policyv1.Policy{"d": member("", true), "p": member(policyv1.Pending, false), "u": member("", false)},
			[]policyv1.NonEmptyString{"u", "p", "x", "d"}, "", "Disabled policies: d; Deleted policies: x; Policies awaiting pending dependencies: p; No status provided while awaiting policy status: u"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state, msg := setCompliance(tt.names, tt.members)
			if state != tt.wantState || msg != tt.wantMessage {
				t.Errorf("setCompliance = (%q, %q), want (%q, %q)", state, msg, tt.wantState, tt.wantMessage)
			}
		})
	}
}

func TestSetPlacements(t *testing.T) {
	bindings := []policyv1.PlacementBinding{
		{ObjectMeta: metav1.ObjectMeta{Name: "z"}, PlacementRef: policyv1.PlacementSubject{Kind: policyv1.PlacementKind, Name: "prod"},
			Subjects: []policyv1.Subject{{Kind: policyv1.PolicySetKind, Name: "set"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "a"}, PlacementRef: policyv1.PlacementSubject{Kind: policyv1.PlacementKind, Name: "dev"},
			Subjects: []policyv1.Subject{{Kind: policyv1.PolicyKind, Name: "set"}, {Kind: policyv1.PolicySetKind, Name: "set"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "other"}, PlacementRef: policyv1.PlacementSubject{Kind: policyv1.PlacementKind, Name: "dev"},
			Subjects: []policyv1.Subject{{Kind: policyv1.PolicyKind, Name: "set"}, {Kind: policyv1.PolicySetKind, Name: "another"}}},
	}
	got := setPlacements("set", bindings)
	if len(got) != 2 || got[0].PlacementBinding != "a" || got[0].Placement != "dev" || got[1].PlacementBinding != "z" || got[1].Placement != "prod" {
		t.Errorf("setPlacements = %+v, want bindings a (dev) and z (prod)", got)
	}
}
