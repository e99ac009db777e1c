package get

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
)

func TestPolicyTables(t *testing.T) {
	items := testPolicies()
	var out bytes.Buffer
	header, rows := policyTable(items, true)
	if err := cmdutil.PrintTable(&out, header, rows); err != nil {
		t.Fatal(err)
	}
	want := "NAMESPACE   NAME   REMEDIATION   COMPLIANT      CLUSTERS\n" +
		"a           base   enforce       NonCompliant   1/2\n" +
		"b           web    -             Pending        0/1\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
	out.Reset()
	header, rows = policyMatrix(items, true)
	if err := cmdutil.PrintTable(&out, header, rows); err != nil {
		t.Fatal(err)
	}
	want = "CLUSTER   a/base         b/web\n" +
		"c1        Compliant      -\n" +
		"c2        NonCompliant   Pending\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("matrix (-want +got):\n%s", diff)
	}
}

func TestPolicyMatrixData(t *testing.T) {
	items := testPolicies()
	items[1].Status.Status = append(items[1].Status.Status, policyv1.CompliancePerClusterStatus{ClusterName: "c3", ClusterNamespace: "c3"})
	var out bytes.Buffer
	if err := cmdutil.PrintData(&out, cmdutil.OutputYAML, policyMatrixData(items)); err != nil {
		t.Fatal(err)
	}
	// The grid as the table has it, a policy not placed on a cluster
	// absent from its row, one placed but not reported yet "".
	want := `clusters:
- compliance:
    a/base: Compliant
  name: c1
- compliance:
    a/base: NonCompliant
    b/web: Pending
  name: c2
- compliance:
    b/web: ""
  name: c3
policies:
- name: base
  namespace: a
- name: web
  namespace: b
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("matrix data (-want +got):\n%s", diff)
	}
}

// testPolicies are two root policies, sorted as get lists them.
func testPolicies() []policyv1.Policy {
	return rootPolicies([]policyv1.Policy{
		testPolicy("a", "base", policyv1.NonCompliant, policyv1.EnforceCapitalized, map[string]policyv1.ComplianceState{"c1": policyv1.Compliant, "c2": policyv1.NonCompliant}),
		func() policyv1.Policy {
			p := testPolicy("c1", "a.base", "", "", nil)
			p.Labels = map[string]string{policyv1.RootPolicyLabel: "a.base"}
			return p
		}(),
		testPolicy("b", "web", policyv1.Pending, "", map[string]policyv1.ComplianceState{"c2": policyv1.Pending}),
	})
}

func testPolicy(ns, name string, rolled policyv1.ComplianceState, action policyv1.RemediationAction, clusters map[string]policyv1.ComplianceState) policyv1.Policy {
	p := policyv1.Policy{}
	p.Namespace, p.Name, p.Spec.RemediationAction, p.Status.ComplianceState = ns, name, action, rolled
	for _, c := range []string{"c1", "c2"} {
		if s, ok := clusters[c]; ok {
			p.Status.Status = append(p.Status.Status, policyv1.CompliancePerClusterStatus{ClusterName: c, ClusterNamespace: c, ComplianceState: s})
		}
	}
	return p
}
