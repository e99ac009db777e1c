package policy

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flotilla-io/flotilla/agent/policy/engine"
	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

func TestIntervalDue(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name     string
		interval string
		last     time.Time
		lastGen  int64
		gen      int64
		wantDue  bool
		wantWait time.Duration
	}{
		{"watch is always due", "watch", now, 1, 1, true, 0},
		{"empty means watch", "", now, 1, 1, true, 0},
		{"never evaluated", "10m", time.Time{}, 0, 1, true, 0},
		{"a new generation", "never", now, 1, 2, true, 0},
		{"never, same generation", "never", now.Add(-time.Hour), 2, 2, false, 0},
		{"duration not yet passed", "10m", now.Add(-4 * time.Minute), 1, 1, false, 6 * time.Minute},
		{"duration passed", "10m", now.Add(-11 * time.Minute), 1, 1, true, 0},
		{"compound duration", "1h30m", now.Add(-time.Hour), 1, 1, false, 30 * time.Minute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			iv, err := parseInterval(tc.interval)
			if err != nil {
				t.Fatal(err)
			}
			due, wait := iv.due(now, tc.last, tc.lastGen, tc.gen)
			if due != tc.wantDue || wait != tc.wantWait {
				t.Errorf("due = %t, %s; want %t, %s", due, wait, tc.wantDue, tc.wantWait)
			}
		})
	}
	for _, bad := range []string{"often", "-1s", "0s"} {
		if _, err := parseInterval(bad); err == nil {
			t.Errorf("parseInterval(%q) accepted", bad)
		}
	}
}

func TestIntervalFor(t *testing.T) {
	ei := policyv1.EvaluationInterval{Compliant: "never", NonCompliant: "30s"}
	if iv, _ := intervalFor(ei, policyv1.Compliant); !iv.never {
		t.Errorf("compliant: %+v", iv)
	}
	for _, s := range []policyv1.ComplianceState{policyv1.NonCompliant, "", policyv1.Pending} {
		if iv, _ := intervalFor(ei, s); iv.every != 30*time.Second {
			t.Errorf("%q: %+v", s, iv)
		}
	}
}

func TestStatusMessage(t *testing.T) {
	cp := &policyv1.ConfigurationPolicy{Status: policyv1.ConfigurationPolicyStatus{
		ComplianceState: policyv1.NonCompliant,
		CompliancyDetails: []policyv1.TemplateStatus{
			{Conditions: []policyv1.TemplateCondition{{Type: "notification", Message: "namespaces [a] found as specified"}}},
			{Conditions: []policyv1.TemplateCondition{{Type: "violation", Message: "namespaces [b] not found"}}},
		},
	}}
	want := "NonCompliant; notification - namespaces [a] found as specified; violation - namespaces [b] not found"
	if got := statusMessage(cp); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestSpecComparesEqualAfterDefaults(t *testing.T) {
	written := policyv1.ConfigurationPolicySpec{
		NamespaceSelector: policyv1.NamespaceSelector{Include: []policyv1.NonEmptyString{"a"}},
		ObjectTemplates: []policyv1.ObjectTemplate{{
			ComplianceType:   policyv1.MustHave,
			ObjectDefinition: runtime.RawExtension{Raw: []byte(`{"kind": "Namespace", "apiVersion": "v1"}`)},
		}},
	}
	readBack := *written.DeepCopy()
	readBack.RemediationAction = policyv1.Inform
	readBack.PruneObjectBehavior = policyv1.PruneNone
	readBack.NamespaceSelector.TerminatingInclusion = policyv1.TerminatingDefault
	readBack.ObjectTemplates[0].RecreateOption = policyv1.RecreateNone
	readBack.ObjectTemplates[0].ObjectDefinition.Raw = []byte(`{"apiVersion":"v1","kind":"Namespace"}`)
	defaultSpec(&written)
	if !sameJSON(written, readBack) {
		t.Error("a spec read back from the spoke, defaulted and re-encoded, must equal the one written")
	}
	readBack.ObjectTemplates[0].ComplianceType = policyv1.MustNotHave
	if sameJSON(written, readBack) {
		t.Error("a changed spec compares equal")
	}
}

func TestPreviousDetail(t *testing.T) {
	p := &policyv1.Policy{Status: policyv1.PolicyStatus{Details: []policyv1.DetailsPerTemplate{
		{TemplateMeta: metav1.ObjectMeta{Name: "a"}, ComplianceState: policyv1.Compliant},
		{TemplateMeta: metav1.ObjectMeta{Name: "template-1"}, ComplianceState: policyv1.NonCompliant},
		{TemplateMeta: metav1.ObjectMeta{Name: "c"}, ComplianceState: policyv1.NonCompliant},
	}}}
	if d := previousDetail(p, engine.PolicyTemplate{Index: 2, Name: "a"}); d.ComplianceState != policyv1.Compliant {
		t.Errorf("by name: %+v", d)
	}
	if d := previousDetail(p, engine.PolicyTemplate{Index: 1}); d.ComplianceState != policyv1.NonCompliant {
		t.Errorf("unnamed, as template-<index>: %+v", d)
	}
	if d := previousDetail(p, engine.PolicyTemplate{Index: 0, Name: "new"}); d.ComplianceState != "" {
		t.Errorf("a new template has no previous detail: %+v", d)
	}
}
