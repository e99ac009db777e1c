package engine

import (
	"context"
	"strings"
	"testing"
)

func TestCustomMessage(t *testing.T) {
	const missing = `
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: Namespace, metadata: {name: staging}}
`
	const found = `
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: Namespace, metadata: {name: prod}}
`
	cases := []struct {
		name, spec, want string
	}{
		{"no customMessage: OCM's default", missing + `customMessage: {compliant: "all good"}`,
			"NonCompliant; violation - namespaces [staging] not found"},
		{"noncompliant template with the default message", missing + `customMessage: {noncompliant: "Ask the platform team. ({{ .DefaultMessage }})"}`,
			"NonCompliant; Ask the platform team. (violation - namespaces [staging] not found)"},
		{"compliant template", found + `customMessage: {compliant: "prod is there", noncompliant: "never shown"}`,
			"Compliant; prod is there"},
		{".Policy holds the evaluated status", missing + `customMessage: {noncompliant: "{{ .Policy.metadata.name }} is {{ .Policy.status.compliant }}: {{ range .Policy.status.relatedObjects }}{{ .object.metadata.name }} {{ .reason }}{{ end }}"}`,
			"NonCompliant; test is NonCompliant: staging Resource not found but should exist"},
		{"a template that fails keeps the default, and says why", missing + `customMessage: {noncompliant: "{{ .Nope.x }}"}`,
			"NonCompliant; violation - namespaces [staging] not found (the customMessage template failed: "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := Evaluate(context.Background(), policy(t, tc.spec), objects(t, cluster))
			if got := res.Message(); !strings.HasPrefix(got, tc.want) {
				t.Errorf("Message() = %q, want %q", got, tc.want)
			}
		})
	}
}
