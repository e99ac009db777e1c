package policy

import (
	"context"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

const admissionPolicy = `{"apiVersion":"policy.open-cluster-management.io/v1","kind":"Policy",
"metadata":{"name":"NAME","namespace":"NS"%s},
"spec":{"disabled":false,"remediationAction":"inform"%s,
"policy-templates":[{"objectDefinition":{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","anything":"goes"}%s}]}%s}`

// policyJSON is a Policy with extra JSON put in its metadata, spec,
// first template and top level.
func policyJSON(ns, name, meta, spec, template, top string) []byte {
	s := strings.NewReplacer("NAME", name, "NS", ns).Replace(admissionPolicy)
	return []byte(strings.Replace(strings.Replace(strings.Replace(strings.Replace(s, "%s", meta, 1), "%s", spec, 1), "%s", template, 1), "%s", top, 1))
}

func TestValidator(t *testing.T) {
	ns := strings.Repeat("n", 30)
	copyLabel := `,"labels":{"policy.open-cluster-management.io/root-policy":"x"}`
	tests := []struct {
		name    string
		op      admissionv1.Operation
		object  []byte
		old     []byte
		wantErr string
	}{
		{name: "62 characters", op: admissionv1.Create, object: policyJSON(ns, strings.Repeat("a", 32), "", "", "", "")},
		{name: "63 characters", op: admissionv1.Create, object: policyJSON(ns, strings.Repeat("a", 33), "", "", "", ""),
			wantErr: `is refused: its namespace and name are 63 characters together (namespace 30, name 33), the most is 62: the hub names its copies "` + ns + "." + strings.Repeat("a", 33) + `", which must fit 63 characters`},
		{name: "a copy is the hub's own", op: admissionv1.Create, object: policyJSON(ns, strings.Repeat("a", 40), copyLabel, "", "", "")},
		{name: "a long name stored before is updated", op: admissionv1.Update, object: policyJSON(ns, strings.Repeat("a", 40), "", "", "", ""),
			old: policyJSON(ns, strings.Repeat("a", 40), "", "", "", "")},
		{name: "unknown spec field", op: admissionv1.Create, object: policyJSON("p", "x", "", `,"remediationactions":"enforce"`, "", ""),
			wantErr: `Policy p/x is refused: strict decoding error: unknown field "spec.remediationactions" (valid fields at spec: `},
		{name: "unknown template field", op: admissionv1.Create, object: policyJSON("p", "x", "", "", `,"ignorePendng":true`, ""),
			wantErr: `unknown field "spec.policy-templates[0].ignorePendng"`},
		{name: "unknown top-level field", op: admissionv1.Create, object: policyJSON("p", "x", "", "", "", `,"labels":{}`),
			wantErr: `unknown field "labels" (valid fields at the top level: `},
		{name: "update adding a field", op: admissionv1.Update, object: policyJSON("p", "x", "", `,"disable":true`, "", ""),
			old: policyJSON("p", "x", "", "", "", ""), wantErr: `unknown field "spec.disable"`},
		{name: "update keeping a field stored before", op: admissionv1.Update, object: policyJSON("p", "x", `,"finalizers":["f"]`, `,"disable":true`, "", ""),
			old: policyJSON("p", "x", "", `,"disable":true`, "", "")},
		{name: "objectDefinition is the agent's to check", op: admissionv1.Create, object: policyJSON("p", "x", "", "", "", "")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: tt.op,
				Object: runtime.RawExtension{Raw: tt.object}, OldObject: runtime.RawExtension{Raw: tt.old}}}
			resp := Validator{}.Handle(context.Background(), req)
			if tt.wantErr == "" {
				if !resp.Allowed {
					t.Fatalf("refused: %s", resp.Result.Message)
				}
				return
			}
			if resp.Allowed || !strings.Contains(resp.Result.Message, tt.wantErr) || resp.Result.Code != 422 {
				t.Fatalf("allowed %v, code %d, message %q, want 422 and one containing %q", resp.Allowed, resp.Result.Code, resp.Result.Message, tt.wantErr)
			}
		})
	}
}
