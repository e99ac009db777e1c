package console

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

func TestPolicyChanges(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	at := func(s int) metav1.Time { return metav1.NewTime(t0.Add(time.Duration(s) * time.Second)) }
	p := &policyv1.Policy{Status: policyv1.PolicyStatus{Details: []policyv1.DetailsPerTemplate{
		{History: []policyv1.ComplianceHistory{
			{LastTimestamp: at(30), Message: "NonCompliant; violation - namespaces [prod] not found"},
			{LastTimestamp: at(10), Message: "Compliant; notification - namespaces [prod] found as specified"},
		}},
		{History: []policyv1.ComplianceHistory{
			{LastTimestamp: at(20), Message: "Compliant; notification - configmaps [a] found as specified"},
		}},
	}}}
	got := policyChanges(p)
	want := []string{"Pending", "Compliant", "NonCompliant"}
	if len(got) != len(want) {
		t.Fatalf("policyChanges = %v, want states %v", got, want)
	}
	for i, w := range want {
		if got[i].state != w {
			t.Errorf("change %d = %s at %s, want %s", i, got[i].state, got[i].at, w)
		}
	}
	for _, tt := range []struct {
		secs int
		want string
	}{{5, ""}, {15, "Pending"}, {25, "Compliant"}, {35, "NonCompliant"}} {
		if s := stateAt(got, t0.Add(time.Duration(tt.secs)*time.Second)); s != tt.want {
			t.Errorf("stateAt(+%ds) = %q, want %q", tt.secs, s, tt.want)
		}
	}
	c := complianceChart([]*policyv1.Policy{p}, t0.Add(40*time.Second))
	if c == nil || c.Max != 1 {
		t.Fatalf("complianceChart = %+v, want a chart up to 1", c)
	}
}
