package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

// contextCluster has ConfigMaps in two namespaces whose values depend on
// the namespace and name, so that only a template resolved per object can
// match every one of them.
const contextCluster = `
apiVersion: v1
kind: Namespace
metadata: {name: team-a, labels: {tenant: "yes"}}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-b, labels: {tenant: "yes"}}
---
apiVersion: v1
kind: Namespace
metadata: {name: other}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: team-a, labels: {owner: team-a}}
data: {tenant: team-a, size: small}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: team-b, labels: {owner: team-b}}
data: {tenant: team-b, size: large}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: team-a-quota, namespace: team-a}
data: {for: team-a}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: web, namespace: team-a, labels: {app: web, copy: web}}
data: {port: "80"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: api, namespace: team-a, labels: {app: api, copy: wrong}}
data: {port: "8080"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: db, namespace: team-b, labels: {app: db, copy: db}}
data: {port: "5432"}
`

func TestObjectContextVariables(t *testing.T) {
	cases := []struct {
		name, spec, want string
		// wantActions are the planned actions (enforce cases), as strings.
		wantActions []string
		// wantData, when set, is the data of each planned action's object, in order.
		wantData []map[string]any
	}{
		{".ObjectNamespace: a named object in each selected namespace", `
namespaceSelector: {include: ["team-*"]}
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: settings, labels: {owner: '{{ .ObjectNamespace }}'}}, data: {tenant: '{{ .ObjectNamespace }}'}}`,
			"Compliant; notification - configmaps [settings] found as specified in namespaces: team-a, team-b", nil, nil},
		{".ObjectNamespace: a templated namespace is the selected one", `
namespaceSelector: {matchLabels: {tenant: "yes"}}
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: settings, namespace: '{{ .ObjectNamespace }}'}, data: {tenant: '{{ .ObjectNamespace }}'}}`,
			"Compliant; notification - configmaps [settings] found as specified in namespaces: team-a, team-b", nil, nil},
		{".ObjectNamespace: only the object whose value differs violates", `
namespaceSelector: {include: ["team-*"]}
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: settings}, data: {size: '{{ if eq .ObjectNamespace "team-a" }}small{{ else }}medium{{ end }}'}}`,
			"NonCompliant; violation - configmaps [settings] found but not as specified in namespace team-b", nil, nil},
		{".ObjectNamespace in an unnamed template: any object of the namespace may match", `
namespaceSelector: {include: ["team-*"]}
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, data: {for: '{{ .ObjectNamespace }}'}}`,
			"NonCompliant; violation - configmaps not found in namespace team-b", nil, nil},
		{".ObjectNamespace in an unnamed mustnothave template", `
namespaceSelector: {include: ["team-*"]}
object-templates:
- complianceType: mustnothave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, data: {for: '{{ .ObjectNamespace }}'}}`,
			"NonCompliant; violation - configmaps [team-a-quota] found in namespace team-a", nil, nil},
		{".ObjectNamespace in the name: one object per namespace", `
namespaceSelector: {include: ["team-*"]}
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: '{{ .ObjectNamespace }}-quota'}}`,
			"NonCompliant; violation - configmaps [team-b-quota] not found in namespace team-b", nil, nil},
		{".ObjectNamespace: enforce creates per-namespace objects", `
remediationAction: enforce
namespaceSelector: {include: ["team-*"]}
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: '{{ .ObjectNamespace }}-limits'}, data: {for: '{{ .ObjectNamespace }}'}}`,
			"",
			[]string{"create ConfigMap team-a/team-a-limits", "create ConfigMap team-b/team-b-limits"},
			[]map[string]any{{"for": "team-a"}, {"for": "team-b"}}},
		{".ObjectName and .Object with an objectSelector", `
namespaceSelector: {include: ["team-*"]}
object-templates:
- complianceType: musthave
  objectSelector: {matchExpressions: [{key: app, operator: Exists}]}
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {labels: {copy: '{{ .ObjectName }}'}}, data: {port: '{{ .Object.data.port }}'}}`,
			"NonCompliant; violation - configmaps [api] found but not as specified in namespace team-a", nil, nil},
		{".ObjectName: enforce patches each selected object with its own values", `
remediationAction: enforce
namespaceSelector: {include: ["team-*"]}
object-templates:
- complianceType: musthave
  objectSelector: {matchLabels: {app: web}}
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: '{{ .ObjectName }}', namespace: '{{ .ObjectNamespace }}'}, data: {self: '{{ .ObjectNamespace }}/{{ .ObjectName }}', was: '{{ .Object.data.port }}'}}`,
			"",
			[]string{"update ConfigMap team-a/web"},
			[]map[string]any{{"port": "80", "self": "team-a/web", "was": "80"}}},
		{".Object of a named object that does not exist is empty", `
namespaceSelector: {include: ["team-*"]}
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: team-a-quota}, data: {for: '{{ if .Object }}{{ .ObjectNamespace }}{{ else }}missing{{ end }}'}}`,
			"NonCompliant; violation - configmaps [team-a-quota] not found in namespace team-b", nil, nil},
		{"skipObject leaves objects out", `
namespaceSelector: {include: ["team-*"]}
object-templates:
- complianceType: musthave
  objectSelector: {matchExpressions: [{key: app, operator: Exists}]}
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {labels: {copy: '{{ skipObject (eq .ObjectName "api") }}{{ .ObjectName }}'}}}`,
			"Compliant; notification - configmaps [db] found as specified in namespace team-b; configmaps [web] found as specified in namespace team-a", nil, nil},
		{"skipObject on every object", `
namespaceSelector: {include: ["team-*"]}
object-templates:
- complianceType: musthave
  objectSelector: {matchExpressions: [{key: app, operator: Exists}]}
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {labels: {copy: '{{ skipObject }}'}}}`,
			"Compliant; notification - All objects of kind ConfigMap were skipped by the `skipObject` template function", nil, nil},
		{"an objectSelector that selects nothing", `
namespaceSelector: {include: ["team-*"]}
object-templates:
- complianceType: musthave
  objectSelector: {matchLabels: {app: none}}
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {labels: {copy: '{{ .ObjectName }}'}}}`,
			"Compliant; notification - No objects of kind ConfigMap were matched from the policy objectSelector", nil, nil},
		// bad input
		{".ObjectName without an object", `
namespaceSelector: {include: ["team-*"]}
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, data: {name: '{{ .ObjectName }}'}}`,
			"NonCompliant; violation - the object template at index [0] uses .ObjectName, which is set only when the template is resolved per object: " +
				"name the object in metadata.name, or select objects with an objectSelector and leave metadata.name empty or templated", nil, nil},
		{".Object without an object", `
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: Namespace, metadata: {name: '{{ .Object.metadata.name }}'}}`,
			"NonCompliant; violation - the object template at index [0] uses .Object, which is set only when the template is resolved per object: " +
				"name the object in metadata.name, or select objects with an objectSelector and leave metadata.name empty or templated", nil, nil},
		{".ObjectNamespace of a cluster-scoped kind", `
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: Namespace, metadata: {name: other, labels: {ns: '{{ .ObjectNamespace }}'}}}`,
			"NonCompliant; violation - the object template at index [0] uses .ObjectNamespace, but namespaces are cluster-scoped: " +
				".ObjectNamespace is set only for namespaced kinds; remove it", nil, nil},
		{".ObjectNamespace without a namespaceSelector", `
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: settings}, data: {tenant: '{{ .ObjectNamespace }}'}}`,
			"NonCompliant; violation - namespaced object settings of kind ConfigMap has no namespace specified from the policy namespaceSelector nor the object metadata", nil, nil},
		{"a namespace that resolves to another namespace", `
namespaceSelector: {include: ["team-*"]}
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: settings, namespace: '{{ .ObjectNamespace }}-x'}}`,
			`NonCompliant; violation - The object definition's namespace must match the result from the namespace selector after template resolution: ` +
				`it resolved to "team-a-x" for namespace "team-a"; leave metadata.namespace empty or resolve it to {{ .ObjectNamespace }}`, nil, nil},
		{"a name that resolves to another name", `
namespaceSelector: {include: ["team-*"]}
object-templates:
- complianceType: musthave
  objectSelector: {matchLabels: {app: web}}
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: '{{ .ObjectName }}-2'}}`,
			`NonCompliant; violation - The object definition's name must match the result from the object selector after template resolution: ` +
				`it resolved to "web-2" for object team-a/web; leave metadata.name empty or resolve it to {{ .ObjectName }}`, nil, nil},
		{"skipObject with too many arguments", `
namespaceSelector: {include: ["team-*"]}
object-templates:
- complianceType: musthave
  objectSelector: {matchLabels: {app: web}}
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {labels: {a: '{{ skipObject true false }}'}}}`,
			`NonCompliant; violation - failed to resolve the template: template: tmpl:5:11: executing "tmpl" at <skipObject true false>: error calling skipObject: skipObject only accepts one optional boolean argument but received 2`, nil, nil},
		{"a templated kind", `
namespaceSelector: {include: ["team-*"]}
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: '{{ "ConfigMap" }}', metadata: {name: '{{ .ObjectNamespace }}'}}`,
			"NonCompliant; violation - the object template at index [0] uses .ObjectNamespace, so its kind and apiVersion must be written out, not templates", nil, nil},
		{"object-templates-raw cannot use them", `
namespaceSelector: {include: ["team-*"]}
object-templates-raw: |
  - complianceType: musthave
    objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: '{{ .ObjectName }}'}}`,
			"NonCompliant; violation - object-templates-raw uses .ObjectName, which is set only while one object template is resolved per object: move the object definition into object-templates", nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := Evaluate(context.Background(), policy(t, tc.spec), objects(t, contextCluster))
			var got []string
			var data []map[string]any
			for _, a := range res.Actions {
				got = append(got, a.String())
				d, _, _ := unstructured.NestedMap(a.Object.Object, "data")
				data = append(data, d)
			}
			if d := cmp.Diff(tc.wantActions, got); d != "" {
				t.Fatalf("actions (-want +got):\n%s", d)
			}
			if tc.wantData != nil {
				if d := cmp.Diff(tc.wantData, data); d != "" {
					t.Errorf("data of the planned objects (-want +got):\n%s", d)
				}
			}
			if tc.want != "" {
				if got := res.Message(); got != tc.want {
					t.Errorf("message:\n got %s\nwant %s", got, tc.want)
				}
			}
		})
	}
}

// TestObjectContextResults checks the structured results of a template
// resolved per object: one per object, each with its own verdict.
func TestObjectContextResults(t *testing.T) {
	cp := policy(t, `
namespaceSelector: {include: ["team-*"]}
object-templates:
- complianceType: musthave
  objectSelector: {matchExpressions: [{key: app, operator: Exists}]}
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {labels: {copy: '{{ .ObjectName }}'}}}`)
	res := Evaluate(context.Background(), cp, objects(t, contextCluster))
	type row struct{ NS, Name, Compliant, Reason string }
	var got []row
	for _, o := range res.Templates[0].Objects {
		got = append(got, row{o.Object.Metadata.Namespace, o.Object.Metadata.Name, string(o.Compliant), o.Reason})
	}
	want := []row{
		{"team-a", "api", "NonCompliant", ReasonFoundNoMatch},
		{"team-a", "web", "Compliant", ReasonFoundAsExpected},
		{"team-b", "db", "Compliant", ReasonFoundAsExpected},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("object results (-want +got):\n%s", d)
	}
	if diffs := res.Templates[0].Objects[0].Diffs; len(diffs) == 0 {
		t.Errorf("the violating object has no diffs")
	}
}

func TestContextVarsOf(t *testing.T) {
	cases := []struct {
		name, text string
		want       contextVars
	}{
		{"none", `name: '{{ fromConfigMap "a" "b" "c" }}'`, nil},
		{"each", `a: '{{ .ObjectNamespace }}{{ .ObjectName }}{{ .Object.data.x }}'`, contextVars{varObjectNamespace, varObjectName, varObject}},
		{"through $ inside range", `a: '{{ range (lookup "v1" "ConfigMap" "" "").items }}{{ $.ObjectName }}{{ end }}'`, contextVars{varObjectName}},
		{"a field of range's dot is not one", `a: '{{ range (lookup "v1" "ConfigMap" "" "").items }}{{ .Object }}{{ end }}'`, nil},
		{"with's pipeline reads the top dot", `a: '{{ with .Object }}{{ .metadata.name }}{{ end }}'`, contextVars{varObject}},
		{"in an if", `a: '{{ if eq .ObjectNamespace "x" }}y{{ end }}'`, contextVars{varObjectNamespace}},
		{"skipObject", `a: '{{ skipObject }}'`, contextVars{funcSkipObject}},
		{"a similar field name", `a: '{{ .ObjectNames }}'`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := contextVarsOf(tc.text)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// BenchmarkPerObjectResolution evaluates a template resolved for each of
// 1,000 selected ConfigMaps, against the same template without context
// variables (resolved once).
func BenchmarkPerObjectResolution(b *testing.B) {
	var docs strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&docs, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%d, namespace: bench, labels: {app: x, copy: cm-%d}}\ndata: {port: \"80\"}\n", i, i)
	}
	objs, err := ReadObjects(strings.NewReader(docs.String()))
	if err != nil {
		b.Fatal(err)
	}
	set := NewObjectSet(objs)
	spec := func(label string) *policyv1.ConfigurationPolicy {
		cp := &policyv1.ConfigurationPolicy{}
		if err := yaml.Unmarshal([]byte(`
metadata: {name: bench}
spec:
  namespaceSelector: {include: [bench]}
  object-templates:
  - complianceType: musthave
    objectSelector: {matchLabels: {app: x}}
    objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {labels: {copy: '`+label+`'}}, data: {port: '{{ "80" }}'}}`), cp); err != nil {
			b.Fatal(err)
		}
		return cp
	}
	for _, bc := range []struct{ name, label string }{
		{"per-object", "{{ .ObjectName }}"},
		{"once", `{{ "x" }}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cp := spec(bc.label)
			for b.Loop() {
				if res := Evaluate(context.Background(), cp, set); len(res.Templates[0].Objects) != 1000 {
					b.Fatalf("objects: %d", len(res.Templates[0].Objects))
				}
			}
		})
	}
}

// failingList is a Reader whose List of ConfigMaps fails.
type failingList struct{ *ObjectSet }

func (f failingList) List(ctx context.Context, m *meta.RESTMapping, ns string, sel labels.Selector) ([]*unstructured.Unstructured, error) {
	if m.GroupVersionKind.Kind == "ConfigMap" {
		return nil, errors.New("the cache is not synced")
	}
	return f.ObjectSet.List(ctx, m, ns, sel)
}

// TestObjectContextErrorReasons checks that a template that does not
// resolve for an object and a read that fails keep their own reasons.
func TestObjectContextErrorReasons(t *testing.T) {
	const selected = `
namespaceSelector: {include: ["team-*"]}
object-templates:
- complianceType: musthave
  objectSelector: {matchLabels: {app: web}}
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: '{{ .ObjectName }}%s'}}`
	set := objects(t, contextCluster)
	cases := []struct {
		name, suffix string
		r            Reader
		reason, msg  string
	}{
		{"resolves to another name", "-2", set, ReasonTemplateError, "The object definition's name must match"},
		{"a list that fails", "", failingList{set}, ReasonMappingError, "failed to list configmaps: the cache is not synced"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := Evaluate(context.Background(), policy(t, fmt.Sprintf(selected, tc.suffix)), tc.r)
			e := res.Templates[0].Err
			if e == nil || e.Reason != tc.reason || !strings.HasPrefix(e.Message, tc.msg) {
				t.Errorf("error = %+v, want reason %q and a message starting %q", e, tc.reason, tc.msg)
			}
		})
	}
}
