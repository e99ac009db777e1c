package policy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	"github.com/flotilla-io/flotilla/cli"
	policycmd "github.com/flotilla-io/flotilla/cli/cmd/policy"
)

// examplePolicy is the policy of the project brief, beside the repository.
const examplePolicy = "../../../../shared/examples/policy-namespace.yaml"

// clusterDir writes a directory of objects, standing for a cluster.
func clusterDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// flotilla runs the command line and returns exit code and output.
func flotilla(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := cli.Run(context.Background(), cli.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, args)
	return code, out.String(), errOut.String()
}

func TestPolicyTestExample(t *testing.T) {
	without := clusterDir(t, map[string]string{
		"namespaces.yaml":   "apiVersion: v1\nkind: Namespace\nmetadata: {name: default}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: staging}\n",
		"apps/config.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: staging}\ndata: {a: b}\n",
		"README.md":         "not objects: skipped",
		"apps/ignored.yaml": "",
	})
	with := clusterDir(t, map[string]string{"prod.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: prod}\n"})

	code, out, errOut := flotilla("policy", "test", examplePolicy, "--against", without)
	if code != 1 {
		t.Errorf("against a cluster without namespace prod: exit code %d, want 1 (stderr %q)", code, errOut)
	}
	for _, want := range []string{
		"Policy policies/policy-namespace: NonCompliant\n",
		"NonCompliant; violation - namespaces [prod] not found\n",
		"- NonCompliant Namespace prod: Resource not found but should exist\n",
		// The Policy's enforce overrides the template's inform.
		"enforce would create Namespace prod (not done by policy test)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "not compliant against "+without+": policies/policy-namespace") {
		t.Errorf("stderr: %q", errOut)
	}

	code, out, errOut = flotilla("policy", "test", examplePolicy, "--against", with)
	if code != 0 {
		t.Errorf("against a cluster with namespace prod: exit code %d, want 0 (stderr %q)", code, errOut)
	}
	if !strings.Contains(out, "Compliant; notification - namespaces [prod] found as specified\n") {
		t.Errorf("stdout:\n%s", out)
	}
}

func TestPolicyTestJSON(t *testing.T) {
	policy := clusterDir(t, map[string]string{"p.yaml": `
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata: {name: all, namespace: policies}
spec: {}
---
apiVersion: policy.open-cluster-management.io/v1
kind: ConfigurationPolicy
metadata: {name: web-config}
spec:
  remediationAction: inform
  object-templates:
  - complianceType: musthave
    objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: web, namespace: apps}, data: {mode: fast}}
`})
	against := clusterDir(t, map[string]string{"cm.json": `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web", "namespace": "apps"}, "data": {"mode": "slow"}}`})
	code, out, errOut := flotilla("policy", "test", filepath.Join(policy, "p.yaml"), "--against", filepath.Join(against, "cm.json"), "-o", "json")
	if code != 1 {
		t.Fatalf("exit code %d (stderr %q)", code, errOut)
	}
	var report policycmd.TestReport
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out)
	}
	if report.Compliant != policyv1.NonCompliant || len(report.Policies) != 1 {
		t.Fatalf("report: %+v", report)
	}
	d := report.Policies[0].Status.Details[0]
	if d.TemplateMeta.Name != "web-config" || d.History[0].Message != "NonCompliant; violation - configmaps [web] found but not as specified in namespace apps" {
		t.Errorf("details: %+v", d)
	}
	want := policyv1.FieldDiff{Path: "data.mode", Expected: `"fast"`, Actual: `"slow"`}
	if objs := d.Results.Objects; len(objs) != 1 || len(objs[0].Diffs) != 1 || objs[0].Diffs[0] != want {
		t.Errorf("results: %+v", d.Results)
	}
}

func TestPolicyTestErrors(t *testing.T) {
	dir := clusterDir(t, map[string]string{"none.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", "bad.yaml": "kind: [\n"})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"policy", "test", examplePolicy}, "--against is required"},
		{[]string{"policy", "test", "--against", dir}, "name one policy file"},
		{[]string{"policy", "test", filepath.Join(dir, "none.yaml"), "--against", dir}, "no Policy or ConfigurationPolicy found"},
		{[]string{"policy", "test", examplePolicy, "--against", filepath.Join(dir, "missing")}, "no such file or directory"},
		{[]string{"policy", "test", examplePolicy, "--against", dir}, "bad.yaml"},
		{[]string{"policy", "test", examplePolicy, "--against", dir, "-o", "wide"}, `--output "wide" is not supported`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, errOut := flotilla(tc.args...)
			if code != 1 || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit code %d, stderr %q; want 1 and %q", code, errOut, tc.want)
			}
		})
	}
}

// TestPolicyTestBadInput: a Policy without a name, or with an unknown
// field, is refused with the file named; a bad template fails the run,
// naming the file, the template's index and the field, and leaves the
// other templates evaluated.
func TestPolicyTestBadInput(t *testing.T) {
	dir := clusterDir(t, map[string]string{
		"nameless.yaml": "apiVersion: policy.open-cluster-management.io/v1\nkind: Policy\nmetadata: {namespace: p}\nspec: {policy-templates: []}\n",
		"unknown.yaml":  "apiVersion: policy.open-cluster-management.io/v1\nkind: Policy\nmetadata: {name: x, namespace: p}\nspec: {policy-templates: [], remediationactions: enforce}\n",
		"template.yaml": `apiVersion: policy.open-cluster-management.io/v1
kind: Policy
metadata: {name: x, namespace: p}
spec:
  policy-templates:
  - objectDefinition:
      apiVersion: policy.open-cluster-management.io/v1
      kind: ConfigurationPolicy
      metadata: {name: ok}
      spec:
        remediationAction: inform
        object-templates: [{complianceType: mustnothave, objectDefinition: {apiVersion: v1, kind: Namespace, metadata: {name: gone}}}]
  - objectDefinition:
      apiVersion: policy.open-cluster-management.io/v1
      kind: ConfigurationPolicy
      metadata: {name: bad}
      spec:
        remediationAction: inform
        object-templates: [{complianceType: shouldhave, objectDefinition: {apiVersion: v1, kind: Namespace, metadata: {name: x}}}]
`,
		"cluster/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: default}\n",
	})
	against := filepath.Join(dir, "cluster")
	code, out, errOut := flotilla("policy", "test", filepath.Join(dir, "nameless.yaml"), "--against", against)
	if code == 0 || !strings.Contains(errOut, "nameless.yaml: a Policy has no metadata.name") || strings.Contains(out, "Policy :") {
		t.Errorf("nameless: exit %d\n%s%s", code, out, errOut)
	}
	code, _, errOut = flotilla("policy", "test", filepath.Join(dir, "unknown.yaml"), "--against", against)
	if code == 0 || !strings.Contains(errOut, `unknown.yaml: Policy x: strict decoding error: unknown field "spec.remediationactions"`) {
		t.Errorf("unknown field: exit %d\n%s", code, errOut)
	}
	code, out, errOut = flotilla("policy", "test", filepath.Join(dir, "template.yaml"), "--against", against)
	if code == 0 || !strings.Contains(errOut, "template.yaml: Policy p/x, policy template at index 1 (bad)") ||
		!strings.Contains(errOut, `spec.object-templates[0].complianceType: Unsupported value: "shouldhave"`) {
		t.Errorf("bad template: exit %d\n%s", code, errOut)
	}
	if !strings.Contains(out, "Compliant; notification - namespaces [gone] missing as expected") {
		t.Errorf("the good template must still be evaluated:\n%s", out)
	}
}
