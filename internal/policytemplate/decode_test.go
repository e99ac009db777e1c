package policytemplate

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func decodeYAML(t *testing.T, doc string) Template {
	t.Helper()
	raw, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return DecodeTemplate(0, raw)
}

func TestDecodeTemplate(t *testing.T) {
	const head = "apiVersion: policy.open-cluster-management.io/v1\nkind: ConfigurationPolicy\nmetadata: {name: cp}\n"
	cases := []struct{ name, doc, want string }{
		{"valid", head + "spec: {remediationAction: inform, object-templates: [{complianceType: musthave, objectDefinition: {apiVersion: v1, kind: Namespace, metadata: {name: prod}}}]}", ""},
		{"unknown spec field", head + "spec: {remediationAction: inform, unknownField: 1, object-templates: []}",
			`Failed to create policy template: ConfigurationPolicy cp at index 0: strict decoding error: unknown field "spec.unknownField" (valid fields at spec: customMessage, evaluationInterval, namespaceSelector, object-templates, object-templates-raw, pruneObjectBehavior, remediationAction, severity)`},
		{"severity in an object template", head + "spec: {remediationAction: inform, object-templates: [{complianceType: musthave, severity: high, objectDefinition: {apiVersion: v1, kind: Namespace}}]}",
			`unknown field "spec.object-templates[0].severity" (valid fields at spec.object-templates[0]: complianceType, metadataComplianceType, objectDefinition, objectSelector, recordDiff, recreateOption)`},
		{"object-templates as a map", head + "spec: {remediationAction: inform, object-templates: {complianceType: musthave}}",
			`spec.object-templates: Invalid value: an object, want a list`},
		{"bad complianceType", head + "spec: {remediationAction: inform, object-templates: [{complianceType: mustbe, objectDefinition: {apiVersion: v1, kind: Namespace}}]}",
			`spec.object-templates[0].complianceType: Unsupported value: "mustbe": supported values: "musthave", "mustonlyhave", "mustnothave"`},
		{"no name", "apiVersion: policy.open-cluster-management.io/v1\nkind: ConfigurationPolicy\nspec: {}", "Failed to parse or get name from policy template at index 0"},
		{"no kind", "metadata: {name: x}\nspec: {}", "Object 'Kind' is missing"},
		{"wrong type of data", head + "spec: {remediationAction: inform, severity: [high], object-templates: []}", `spec.severity: Invalid value: a list, want a string`},
	}
	for _, tc := range cases {
		got := decodeYAML(t, tc.doc)
		switch {
		case tc.want == "" && got.Err != nil:
			t.Errorf("%s: %v", tc.name, got.Err)
		case tc.want != "" && (got.Err == nil || !strings.Contains(got.Err.Error(), tc.want)):
			t.Errorf("%s:\n got %v\nwant …%s…", tc.name, got.Err, tc.want)
		case tc.want != "" && got.ConfigurationPolicy != nil:
			t.Errorf("%s: a template in error has a ConfigurationPolicy", tc.name)
		}
	}
}
