package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

// cluster is the objects most cases are evaluated against.
const cluster = `
apiVersion: v1
kind: Namespace
metadata: {name: prod, labels: {env: prod}}
---
apiVersion: v1
kind: Namespace
metadata: {name: app-1, labels: {team: a}}
---
apiVersion: v1
kind: Namespace
metadata: {name: app-2, labels: {team: a}}
---
apiVersion: v1
kind: Namespace
metadata: {name: app-3, labels: {team: b}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cm, namespace: default, labels: {app: web, tier: front}}
data: {a: "1", b: two, mem: 1024Mi}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cm, namespace: app-1}
data: {a: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cm, namespace: app-2}
data: {a: "2"}
---
apiVersion: v1
kind: Pod
metadata: {name: web-1, namespace: default, labels: {app: web}}
spec:
  hostNetwork: false
  containers:
  - name: nginx
    image: nginx:1.24
    args: [serve, --verbose]
    ports: [{containerPort: 8080}, {containerPort: 80}]
  - name: sidecar
    image: busybox
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata: {name: web-2, namespace: default, labels: {app: web}}
spec:
  containers:
  - name: nginx
    image: nginx:1.25
status: {phase: Pending}
---
apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: default}
stringData: {password: hunter2}
---
apiVersion: cluster.open-cluster-management.io/v1alpha1
kind: ClusterClaim
metadata: {name: region}
spec: {value: eu-west}
`

// policy builds a ConfigurationPolicy from YAML of its spec.
func policy(t *testing.T, spec string) *policyv1.ConfigurationPolicy {
	t.Helper()
	cp := &policyv1.ConfigurationPolicy{}
	if err := yaml.Unmarshal([]byte("metadata: {name: test}\nspec:\n"+"  "+strings.ReplaceAll(strings.TrimSpace(spec), "\n", "\n  ")), cp); err != nil {
		t.Fatalf("bad policy: %v", err)
	}
	return cp
}

// objects builds an ObjectSet from YAML documents.
func objects(t *testing.T, docs string) *ObjectSet {
	t.Helper()
	objs, err := ReadObjects(strings.NewReader(docs))
	if err != nil {
		t.Fatalf("bad objects: %v", err)
	}
	return NewObjectSet(objs)
}

func TestEvaluateMessages(t *testing.T) {
	cases := []struct {
		name, spec, want string
	}{
		// musthave
		{"musthave: missing namespace", `
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: Namespace, metadata: {name: staging}}`,
			"NonCompliant; violation - namespaces [staging] not found"},
		{"musthave: namespace found", `
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: Namespace, metadata: {name: prod}}`,
			"Compliant; notification - namespaces [prod] found as specified"},
		{"compliance types are case-insensitive: MustHave", `
object-templates:
- complianceType: MustHave
  objectDefinition: {apiVersion: v1, kind: Namespace, metadata: {name: prod}}`,
			"Compliant; notification - namespaces [prod] found as specified"},
		{"compliance types are case-insensitive: Musthave", `
object-templates:
- complianceType: Musthave
  objectDefinition: {apiVersion: v1, kind: Namespace, metadata: {name: staging}}`,
			"NonCompliant; violation - namespaces [staging] not found"},
		{"musthave: map subset, extra keys fine", `
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default}, data: {a: "1"}}`,
			"Compliant; notification - configmaps [cm] found as specified in namespace default"},
		{"musthave: map value differs", `
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default}, data: {a: "2"}}`,
			"NonCompliant; violation - configmaps [cm] found but not as specified in namespace default"},
		{"musthave: missing key", `
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default}, data: {c: "3"}}`,
			"NonCompliant; violation - configmaps [cm] found but not as specified in namespace default"},
		{"musthave: quantities compare by value", `
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default}, data: {mem: 1Gi}}`,
			"Compliant; notification - configmaps [cm] found as specified in namespace default"},
		{"musthave: a number matches its string", `
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default}, data: {a: 1}}`,
			"Compliant; notification - configmaps [cm] found as specified in namespace default"},
		{"musthave: a zero value matches an absent field", `
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: Pod, metadata: {name: web-2, namespace: default}, spec: {hostNetwork: false}}`,
			"Compliant; notification - pods [web-2] found as specified in namespace default"},
		{"musthave: list items match in any order", `
object-templates:
- complianceType: musthave
  objectDefinition:
    apiVersion: v1
    kind: Pod
    metadata: {name: web-1, namespace: default}
    spec: {containers: [{name: nginx, args: [--verbose], ports: [{containerPort: 80}]}]}`,
			"Compliant; notification - pods [web-1] found as specified in namespace default"},
		{"musthave: named list items are compared field by field", `
object-templates:
- complianceType: musthave
  objectDefinition:
    apiVersion: v1
    kind: Pod
    metadata: {name: web-1, namespace: default}
    spec: {containers: [{name: nginx, image: nginx:1.25}]}`,
			"NonCompliant; violation - pods [web-1] found but not as specified in namespace default"},
		{"musthave: a list item that no item matches", `
object-templates:
- complianceType: musthave
  objectDefinition:
    apiVersion: v1
    kind: Pod
    metadata: {name: web-1, namespace: default}
    spec: {containers: [{name: nginx, ports: [{containerPort: 443}]}]}`,
			"NonCompliant; violation - pods [web-1] found but not as specified in namespace default"},
		{"musthave: labels are a subset", `
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default, labels: {app: web}}}`,
			"Compliant; notification - configmaps [cm] found as specified in namespace default"},
		// mustonlyhave
		{"mustonlyhave: extra map key violates", `
object-templates:
- complianceType: mustonlyhave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default}, data: {a: "1", b: two}}`,
			"NonCompliant; violation - configmaps [cm] found but not as specified in namespace default"},
		{"mustonlyhave: exact map complies", `
object-templates:
- complianceType: MustOnlyHave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default}, data: {a: "1", b: two, mem: 1Gi}}`,
			"Compliant; notification - configmaps [cm] found as specified in namespace default"},
		{"mustonlyhave: list order is ignored", `
object-templates:
- complianceType: mustonlyhave
  objectDefinition:
    apiVersion: v1
    kind: Pod
    metadata: {name: web-1, namespace: default}
    spec:
      hostNetwork: false
      containers:
      - {name: sidecar, image: busybox}
      - {name: nginx, image: nginx:1.24, args: [--verbose, serve], ports: [{containerPort: 80}, {containerPort: 8080}]}`,
			"Compliant; notification - pods [web-1] found as specified in namespace default"},
		{"mustonlyhave: an extra list item violates", `
object-templates:
- complianceType: mustonlyhave
  objectDefinition:
    apiVersion: v1
    kind: Pod
    metadata: {name: web-1, namespace: default}
    spec:
      containers:
      - {name: sidecar, image: busybox}
      - {name: nginx, image: nginx:1.24, args: [serve], ports: [{containerPort: 80}, {containerPort: 8080}]}`,
			"NonCompliant; violation - pods [web-1] found but not as specified in namespace default"},
		{"mustonlyhave on metadata only, by metadataComplianceType", `
object-templates:
- complianceType: musthave
  metadataComplianceType: mustonlyhave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default, labels: {app: web}}}`,
			"NonCompliant; violation - configmaps [cm] found but not as specified in namespace default"},
		// mustnothave
		{"mustnothave: found", `
object-templates:
- complianceType: mustnothave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default}}`,
			"NonCompliant; violation - configmaps [cm] found in namespace default"},
		{"mustnothave: missing", `
object-templates:
- complianceType: MustNotHave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: gone, namespace: default}}`,
			"Compliant; notification - configmaps [gone] missing as expected in namespace default"},
		{"mustnothave: an object that differs from the template is not the one forbidden", `
object-templates:
- complianceType: mustnothave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default}, data: {a: "9"}}`,
			"Compliant; notification - configmaps [cm] missing as expected in namespace default"},
		// unnamed templates
		{"unnamed musthave: matching objects", `
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: Pod, metadata: {namespace: default, labels: {app: web}}}`,
			"Compliant; notification - pods [web-1, web-2] found as specified in namespace default"},
		{"unnamed musthave: no object matches", `
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: Pod, metadata: {namespace: default}, spec: {containers: [{name: nginx, image: nginx:1.26}]}}`,
			"NonCompliant; violation - pods not found in namespace default"},
		{"unnamed mustnothave: matching objects", `
object-templates:
- complianceType: mustnothave
  objectDefinition: {apiVersion: v1, kind: Pod, metadata: {namespace: default}, status: {phase: Pending}}`,
			"NonCompliant; violation - pods [web-2] found in namespace default"},
		{"unnamed mustnothave: none", `
object-templates:
- complianceType: mustnothave
  objectDefinition: {apiVersion: v1, kind: Pod, metadata: {namespace: default}, status: {phase: Failed}}`,
			"Compliant; notification - pods missing as expected in namespace default"},
		{"unnamed cluster-scoped", `
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: Namespace, metadata: {labels: {team: a}}}`,
			"Compliant; notification - namespaces [app-1, app-2] found as specified"},
		// namespace selection
		{"namespaceSelector: include and exclude globs", `
namespaceSelector: {include: ["app-*"], exclude: [app-2]}
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: cm}}`,
			"NonCompliant; violation - configmaps [cm] not found in namespace app-3"},
		{"namespaceSelector: compliant in several namespaces", `
namespaceSelector: {include: ["app-1", "default"]}
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: cm}}`,
			"Compliant; notification - configmaps [cm] found as specified in namespaces: app-1, default"},
		{"namespaceSelector: only violations are reported", `
namespaceSelector: {include: ["app-*", default]}
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: cm}, data: {a: "1"}}`,
			"NonCompliant; violation - configmaps [cm] not found in namespace app-3; configmaps [cm] found but not as specified in namespace app-2"},
		{"namespaceSelector: matchLabels", `
namespaceSelector: {matchLabels: {team: a}}
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: cm}}`,
			"Compliant; notification - configmaps [cm] found as specified in namespaces: app-1, app-2"},
		{"namespaceSelector: matchExpressions", `
namespaceSelector: {matchExpressions: [{key: team, operator: NotIn, values: [a]}], exclude: [kube-*]}
object-templates:
- complianceType: mustnothave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: cm}}`,
			"NonCompliant; violation - configmaps [cm] found in namespace default"},
		{"namespaceSelector: unnamed objects group by names", `
namespaceSelector: {include: ["app-*"]}
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {labels: {}}}`,
			"NonCompliant; violation - configmaps not found in namespace app-3"},
		{"no namespace at all", `
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: cm}}`,
			"NonCompliant; violation - namespaced object cm of kind ConfigMap has no namespace specified from the policy namespaceSelector nor the object metadata"},
		{"a bad glob", `
namespaceSelector: {include: ["["]}
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: cm}}`,
			"NonCompliant; violation - Error filtering namespaces with provided namespaceSelector: syntax error in pattern"},
		// objectSelector
		{"objectSelector: each selected object is checked", `
object-templates:
- complianceType: musthave
  objectSelector: {matchLabels: {app: web}}
  objectDefinition: {apiVersion: v1, kind: Pod, metadata: {namespace: default}, spec: {containers: [{name: nginx, image: nginx:1.25}]}}`,
			"NonCompliant; violation - pods [web-1] found but not as specified in namespace default"},
		{"objectSelector: nothing selected", `
object-templates:
- complianceType: musthave
  objectSelector: {matchLabels: {app: none}}
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {namespace: default}}`,
			"Compliant; notification - No objects of kind ConfigMap were matched from the policy objectSelector"},
		// status
		{"status is checked: equal", `
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: Pod, metadata: {name: web-1, namespace: default}, status: {phase: Running}}`,
			"Compliant; notification - pods [web-1] found as specified in namespace default"},
		{"status is checked: differs", `
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: Pod, metadata: {name: web-2, namespace: default}, status: {phase: Running}}`,
			"NonCompliant; violation - pods [web-2] found but not as specified in namespace default"},
		// several templates
		{"one clause per object template", `
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: Namespace, metadata: {name: prod}}
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: Namespace, metadata: {name: staging}}`,
			"NonCompliant; notification - namespaces [prod] found as specified; violation - namespaces [staging] not found"},
		// templates
		{"templates: fromConfigMap", `
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: Namespace, metadata: {name: '{{ fromConfigMap "default" "cm" "b" }}'}}`,
			"NonCompliant; violation - namespaces [two] not found"},
		{"templates: fromClusterClaim", `
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default}, data: {region: '{{ fromClusterClaim "region" }}'}}`,
			"NonCompliant; violation - configmaps [cm] found but not as specified in namespace default"},
		{"templates: lookup", `
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: app-1}, data: {a: '{{ (lookup "v1" "ConfigMap" "default" "cm").data.a }}'}}`,
			"Compliant; notification - configmaps [cm] found as specified in namespace app-1"},
		{"templates: lookup of a list, toInt", `
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default}, data: {a: '{{ len (lookup "v1" "Namespace" "" "" "team=a").items | toInt }}'}}`,
			"NonCompliant; violation - configmaps [cm] found but not as specified in namespace default"},
		{"templates: fromSecret", `
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: Secret, metadata: {name: creds, namespace: default}, data: {password: '{{ fromSecret "default" "creds" "password" }}'}}`,
			"Compliant; notification - secrets [creds] found as specified in namespace default"},
		{"templates: an unparsable expression", `
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: Namespace, metadata: {name: '{{ nosuchfunc "x" }}'}}`,
			`NonCompliant; violation - failed to parse the template: template: tmpl:4: function "nosuchfunc" not defined`},
		{"templates: a missing ConfigMap", `
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: Namespace, metadata: {name: '{{ fromConfigMap "default" "nope" "x" }}'}}`,
			`NonCompliant; violation - failed to resolve the template: template: tmpl:4:12: executing "tmpl" at <fromConfigMap "default" "nope" "x">: error calling fromConfigMap: failed getting the ConfigMap nope from default: configmaps "nope" not found`},
		{"templates: hub templates never reach a cluster", `
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: Namespace, metadata: {name: '{{hub .ManagedClusterName hub}}'}}`,
			"NonCompliant; violation - hub templates ({{hub ... hub}}) are resolved on the hub before a policy reaches a managed cluster; this one was not"},
		{"object-templates-raw", `
object-templates-raw: |
  {{- range (lookup "v1" "Namespace" "" "" "team=a").items }}
  - complianceType: musthave
    objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: {{ .metadata.name }}}}
  {{- end }}`,
			"Compliant; notification - configmaps [cm] found as specified in namespace app-1; notification - configmaps [cm] found as specified in namespace app-2"},
		{"object-templates-raw that does not parse", `
object-templates-raw: |
  {{- range (listOf "prod" "staging") }}
  - complianceType: musthave
    objectDefinition: {apiVersion: v1, kind: Namespace, metadata: {name: {{ . }}}}
  {{- end }}`,
			`NonCompliant; violation - failed to parse the template: template: tmpl:1: function "listOf" not defined`},
		// bad input
		{"unknown kind", `
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: example.com/v1, kind: Widget, metadata: {name: w}}`,
			"NonCompliant; violation - couldn't find mapping resource with kind Widget in API version example.com/v1, please check if you have CRD deployed"},
		{"no kind", `
object-templates:
- complianceType: musthave
  objectDefinition: {metadata: {name: w}}`,
			"NonCompliant; violation - The kind and apiVersion fields are required on the object template at index 0 in policy test"},
		{"an object definition that is no object", `
object-templates:
- complianceType: musthave
  objectDefinition: [1, 2]`,
			"NonCompliant; violation - Decoding error, please check your policy file! Aborting handling the object template at index [0] in policy `test` with error = `json: cannot unmarshal array into Go value of type map[string]interface {}`"},
		{"an unknown compliance type", `
object-templates:
- complianceType: shouldhave
  objectDefinition: {apiVersion: v1, kind: Namespace, metadata: {name: prod}}`,
			`NonCompliant; violation - spec.object-templates[0].complianceType: Unsupported value: "shouldhave": supported values: "musthave", "mustonlyhave", "mustnothave"`},
		{"no object templates", `
object-templates: []`,
			"Compliant"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := Evaluate(context.Background(), policy(t, tc.spec), objects(t, cluster))
			if got := res.Message(); got != tc.want {
				t.Errorf("message:\n got %s\nwant %s", got, tc.want)
			}
			if len(res.Actions) != 0 {
				t.Errorf("inform planned actions: %v", res.Actions)
			}
		})
	}
}

func TestCompliancyDetails(t *testing.T) {
	cp := policy(t, `
namespaceSelector: {include: ["app-*"]}
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: Namespace, metadata: {name: prod}}
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: cm}, data: {a: "1"}}
- complianceType: mustnothave
  objectDefinition: {apiVersion: v1, kind: Namespace, metadata: {name: prod}}
- complianceType: mustnothave
  objectDefinition: {apiVersion: v1, kind: Namespace, metadata: {name: gone}}
- complianceType: musthave
  objectDefinition: {apiVersion: example.com/v1, kind: Widget, metadata: {name: w}}`)
	now := nowAt(0)
	got := Evaluate(context.Background(), cp, objects(t, cluster)).CompliancyDetails(now)
	cond := func(state policyv1.ComplianceState, typ, reason, msg string) policyv1.TemplateStatus {
		return policyv1.TemplateStatus{ComplianceState: state, Conditions: []policyv1.TemplateCondition{{
			Type: typ, Status: "True", LastTransitionTime: now, Reason: reason, Message: msg}}}
	}
	want := []policyv1.TemplateStatus{
		cond(policyv1.Compliant, "notification", "K8s `must have` object already exists", "namespaces [prod] found as specified"),
		cond(policyv1.NonCompliant, "violation", "K8s does not have a `must have` object; K8s does not have a `must have` object",
			"configmaps [cm] not found in namespace app-3; configmaps [cm] found but not as specified in namespace app-2"),
		cond(policyv1.NonCompliant, "violation", "K8s has a `must not have` object", "namespaces [prod] found"),
		cond(policyv1.Compliant, "notification", "K8s `must not have` object already missing", "namespaces [gone] missing as expected"),
		cond(policyv1.NonCompliant, "violation", "K8s error", "couldn't find mapping resource with kind Widget in API version example.com/v1, please check if you have CRD deployed"),
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("compliancyDetails (-want +got):\n%s", d)
	}
}

func TestEvaluateDiffs(t *testing.T) {
	cases := []struct {
		name, spec string
		want       []policyv1.FieldDiff
	}{
		{"changed value", `
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default}, data: {a: "2"}}`,
			[]policyv1.FieldDiff{{Path: "data.a", Expected: `"2"`, Actual: `"1"`}}},
		{"missing key", `
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default, labels: {app.kubernetes.io/name: x}}}`,
			[]policyv1.FieldDiff{{Path: `metadata.labels["app.kubernetes.io/name"]`, Expected: `"x"`}}},
		{"named list item", `
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: Pod, metadata: {name: web-1, namespace: default}, spec: {containers: [{name: nginx, image: nginx:1.25}, {name: db}]}}`,
			[]policyv1.FieldDiff{
				{Path: "spec.containers[name=nginx].image", Expected: `"nginx:1.25"`, Actual: `"nginx:1.24"`},
				{Path: "spec.containers[name=db]", Expected: `{"name":"db"}`},
			}},
		{"unnamed list item", `
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: Pod, metadata: {name: web-1, namespace: default}, spec: {containers: [{name: nginx, args: [--quiet]}]}}`,
			[]policyv1.FieldDiff{{Path: "spec.containers[name=nginx].args[]", Expected: `"--quiet"`}}},
		{"mustonlyhave extras", `
object-templates:
- complianceType: mustonlyhave
  objectDefinition: {apiVersion: v1, kind: Pod, metadata: {name: web-1, namespace: default}, spec: {containers: [{name: nginx, image: nginx:1.24, args: [serve], ports: [{containerPort: 80}, {containerPort: 8080}]}]}}`,
			[]policyv1.FieldDiff{
				{Path: "spec.containers[name=nginx].args[]", Actual: `"--verbose"`},
				{Path: "spec.containers[]", Actual: `{"image":"busybox","name":"sidecar"}`},
				{Path: "spec.hostNetwork", Actual: "false"},
			}},
		{"status", `
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: Pod, metadata: {name: web-2, namespace: default}, status: {phase: Running}}`,
			[]policyv1.FieldDiff{{Path: "status.phase", Expected: `"Running"`, Actual: `"Pending"`}}},
		{"values of Secrets are withheld", `
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: Secret, metadata: {name: creds, namespace: default}, data: {password: c2VjcmV0}}`,
			[]policyv1.FieldDiff{{Path: "data.password"}}},
		{"values read from Secrets are withheld", `
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default}, data: {a: '{{ fromSecret "default" "creds" "password" }}'}}`,
			[]policyv1.FieldDiff{{Path: "data.a"}}},
		{"recordDiff None", `
object-templates:
- complianceType: musthave
  recordDiff: None
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default}, data: {a: "2"}}`,
			nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := Evaluate(context.Background(), policy(t, tc.spec), objects(t, cluster))
			results := res.Results(0)
			if len(results.Objects) != 1 {
				t.Fatalf("want one object result, got %+v (%s)", results, res.Message())
			}
			o := results.Objects[0]
			if o.Compliant != policyv1.NonCompliant || o.Reason != ReasonFoundNoMatch {
				t.Errorf("got %s %q, want NonCompliant %q", o.Compliant, o.Reason, ReasonFoundNoMatch)
			}
			if d := cmp.Diff(tc.want, o.Diffs); d != "" {
				t.Errorf("diffs (-want +got):\n%s", d)
			}
		})
	}
}

func TestEnforce(t *testing.T) {
	cases := []struct {
		name, spec string
		// wantActions are the planned actions, as strings.
		wantActions []string
		// wantObject, when set, is checked against the first action's object.
		wantObject func(t *testing.T, u *unstructured.Unstructured)
		// failed makes the first action fail.
		failed bool
		want   string
	}{
		{"create", `
remediationAction: enforce
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: Namespace, metadata: {name: staging, labels: {env: staging}}, status: {phase: Active}}`,
			[]string{"create Namespace staging"},
			func(t *testing.T, u *unstructured.Unstructured) {
				if _, ok := u.Object["status"]; ok {
					t.Error("status is never enforced, yet the object to create has one")
				}
				if u.GetLabels()["env"] != "staging" {
					t.Errorf("labels: %v", u.GetLabels())
				}
			}, false,
			"Compliant; notification - namespaces [staging] was created successfully"},
		{"create fails", `
remediationAction: enforce
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: new, namespace: default}}`,
			[]string{"create ConfigMap default/new"}, nil, true,
			"NonCompliant; violation - configmaps [new] in namespace default is missing, and cannot be created, reason: `boom`"},
		{"update merges musthave into the object", `
remediationAction: Enforce
object-templates:
- complianceType: musthave
  objectDefinition:
    apiVersion: v1
    kind: Pod
    metadata: {name: web-1, namespace: default, labels: {tier: web}}
    spec: {containers: [{name: nginx, image: nginx:1.25, ports: [{containerPort: 443}]}]}`,
			[]string{"update Pod default/web-1"},
			func(t *testing.T, u *unstructured.Unstructured) {
				want := map[string]any{"name": "nginx", "image": "nginx:1.25", "args": []any{"serve", "--verbose"},
					"ports": []any{map[string]any{"containerPort": int64(8080)}, map[string]any{"containerPort": int64(80)}, map[string]any{"containerPort": int64(443)}}}
				containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "containers")
				if d := cmp.Diff(want, containers[0]); d != "" || len(containers) != 2 {
					t.Errorf("containers (-want +got):\n%s\n%v", d, containers)
				}
				if u.GetLabels()["app"] != "web" || u.GetLabels()["tier"] != "web" {
					t.Errorf("labels: %v", u.GetLabels())
				}
			}, false,
			"Compliant; notification - pods [web-1] was updated successfully in namespace default"},
		{"update replaces with mustonlyhave", `
remediationAction: enforce
object-templates:
- complianceType: mustonlyhave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default}, data: {a: "1"}}`,
			[]string{"update ConfigMap default/cm"},
			func(t *testing.T, u *unstructured.Unstructured) {
				if d := cmp.Diff(map[string]any{"a": "1"}, u.Object["data"]); d != "" {
					t.Errorf("data (-want +got):\n%s", d)
				}
				if u.GetLabels()["app"] != "web" {
					t.Errorf("mustonlyhave without labels in the template dropped them: %v", u.GetLabels())
				}
			}, false,
			"Compliant; notification - configmaps [cm] was updated successfully in namespace default"},
		{"status cannot be enforced", `
remediationAction: enforce
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: Pod, metadata: {name: web-2, namespace: default}, status: {phase: Running}}`,
			nil, nil, false,
			"NonCompliant; violation - pods [web-2] found but not as specified in namespace default"},
		{"delete with mustnothave", `
remediationAction: enforce
object-templates:
- complianceType: mustnothave
  objectDefinition: {apiVersion: v1, kind: Pod, metadata: {name: web-1, namespace: default, labels: {app: web}}}`,
			[]string{"delete Pod default/web-1"}, nil, false,
			"Compliant; notification - pods [web-1] was deleted successfully in namespace default"},
		{"an unnamed mustnothave is only informed", `
remediationAction: enforce
object-templates:
- complianceType: mustnothave
  objectDefinition: {apiVersion: v1, kind: Pod, metadata: {namespace: default, labels: {app: web}}}`,
			nil, nil, false,
			"NonCompliant; violation - pods [web-1, web-2] found in namespace default"},
		{"compliant needs nothing", `
remediationAction: enforce
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default}, data: {mem: 1Gi}}`,
			nil, nil, false,
			"Compliant; notification - configmaps [cm] found as specified in namespace default"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := Evaluate(context.Background(), policy(t, tc.spec), objects(t, cluster))
			var got []string
			for _, a := range res.Actions {
				got = append(got, a.String())
			}
			if d := cmp.Diff(tc.wantActions, got); d != "" {
				t.Fatalf("actions (-want +got):\n%s", d)
			}
			if tc.wantObject != nil {
				tc.wantObject(t, res.Actions[0].Object)
			}
			for i, a := range res.Actions {
				var err error
				if tc.failed && i == 0 {
					err = errors.New("boom")
				}
				obj := a.Object
				if a.Type == ActionDelete {
					obj = nil // gone
				}
				res.Done(a, obj, err)
			}
			if got := res.Message(); got != tc.want {
				t.Errorf("message:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestRelatedObjects(t *testing.T) {
	cp := policy(t, `
remediationAction: enforce
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: Namespace, metadata: {name: staging}}
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: Namespace, metadata: {name: prod}}`)
	res := Evaluate(context.Background(), cp, objects(t, cluster))
	created := res.Actions[0].Object.DeepCopy()
	created.SetUID("uid-1")
	res.Done(res.Actions[0], created, nil)
	got := res.RelatedObjects(nil)
	if len(got) != 2 {
		t.Fatalf("related objects: %+v", got)
	}
	if got[0].Reason != ReasonCreated || got[0].Properties == nil || got[0].Properties.CreatedByPolicy == nil || !*got[0].Properties.CreatedByPolicy || got[0].Properties.UID != "uid-1" {
		t.Errorf("created object: %+v %+v", got[0], got[0].Properties)
	}
	if got[1].Reason != ReasonFoundAsExpected || got[1].Compliant != "Compliant" || got[1].Object.Metadata.Name != "prod" {
		t.Errorf("found object: %+v", got[1])
	}
	if got[1].Properties != nil && got[1].Properties.CreatedByPolicy != nil {
		t.Errorf("prod was not created by the policy: %+v", got[1].Properties)
	}
}

func TestPolicyTemplates(t *testing.T) {
	p := &policyv1.Policy{}
	if err := yaml.Unmarshal([]byte(`
metadata: {name: p, namespace: policies}
spec:
  remediationAction: enforce
  disabled: false
  policy-templates:
  - objectDefinition:
      apiVersion: policy.open-cluster-management.io/v1
      kind: ConfigurationPolicy
      metadata: {name: cp}
      spec:
        remediationAction: inform
        object-templates: []
  - objectDefinition:
      apiVersion: policy.open-cluster-management.io/v1
      kind: OperatorPolicy
      metadata: {name: certs}
  - objectDefinition:
      apiVersion: policy.open-cluster-management.io/v1
      kind: ConfigurationPolicy
      spec: {remediationAction: inform}
  - objectDefinition:
      apiVersion: policy.open-cluster-management.io/v1
      kind: ConfigurationPolicy
      metadata: {name: cp}
      spec: {remediationAction: inform}
`), p); err != nil {
		t.Fatal(err)
	}
	got := PolicyTemplates(p)
	if len(got) != 4 {
		t.Fatalf("templates: %+v", got)
	}
	if got[0].Err != nil || got[0].ConfigurationPolicy.Spec.RemediationAction != policyv1.Enforce {
		t.Errorf("the Policy's remediationAction must override the template's: %+v", got[0])
	}
	want := "policy templates of kind OperatorPolicy (policy.open-cluster-management.io/v1) are not supported: Flotilla evaluates ConfigurationPolicy and CertificatePolicy (policy.open-cluster-management.io/v1), and Gatekeeper's ConstraintTemplate (templates.gatekeeper.sh) and constraints (constraints.gatekeeper.sh)"
	if got[1].Err == nil || got[1].Err.Error() != want {
		t.Errorf("unsupported kind: %v", got[1].Err)
	}
	if got[2].Err == nil || got[2].Err.Error() != "Failed to parse or get name from policy template at index 2" || got[2].DisplayName() != "template-2" {
		t.Errorf("no name: %v", got[2].Err)
	}
	if got[3].Err == nil || got[3].Err.Error() != "the policy template at index 3 is named cp, as one before it: template names must be unique" {
		t.Errorf("duplicate name: %v", got[3].Err)
	}
	if msg := TemplateErrorMessage(got[1].Err); msg != "NonCompliant; template-error; "+want {
		t.Errorf("message: %s", msg)
	}
}

func TestRecordHistory(t *testing.T) {
	var h []policyv1.ComplianceHistory
	var changed bool
	for i := range 12 {
		msg := "Compliant; notification - a"
		if i%2 == 1 {
			msg = "NonCompliant; violation - b"
		}
		h, changed = RecordHistory(h, msg, nowAt(i))
		if !changed {
			t.Fatalf("message %d not recorded", i)
		}
	}
	if len(h) != HistoryLimit {
		t.Fatalf("history keeps %d entries, want %d", len(h), HistoryLimit)
	}
	if h[0].Message != "NonCompliant; violation - b" || h[0].LastTimestamp != nowAt(11) || h[9].LastTimestamp != nowAt(2) {
		t.Errorf("history is not newest first: %+v", h)
	}
	if _, changed := RecordHistory(h, h[0].Message, nowAt(12)); changed {
		t.Error("a repeated message was recorded again")
	}
}

func TestRollup(t *testing.T) {
	c, n, p := policyv1.Compliant, policyv1.NonCompliant, policyv1.Pending
	for _, tc := range []struct {
		in   []policyv1.ComplianceState
		want policyv1.ComplianceState
	}{
		{nil, ""}, {[]policyv1.ComplianceState{c, c}, c}, {[]policyv1.ComplianceState{c, p}, p},
		{[]policyv1.ComplianceState{p, n, c}, n}, {[]policyv1.ComplianceState{c, ""}, n},
	} {
		if got := Rollup(tc.in...); got != tc.want {
			t.Errorf("Rollup(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// nowAt is a fixed time, i seconds in.
func nowAt(i int) metav1.Time { return metav1.NewTime(time.Unix(int64(1700000000+i), 0)) }

func TestUpdatePatch(t *testing.T) {
	for _, tc := range []struct{ name, spec, want string }{
		{"mustonlyhave removes keys", `
remediationAction: enforce
object-templates:
- complianceType: mustonlyhave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default}, data: {a: "1", c: "3"}}`,
			`{"data":{"b":null,"c":"3","mem":null}}`},
		{"musthave sends only what changes", `
remediationAction: enforce
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default, labels: {tier: back}}, data: {a: "1"}}`,
			`{"metadata":{"labels":{"tier":"back"}}}`},
		{"a list is sent whole", `
remediationAction: enforce
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: Pod, metadata: {name: web-2, namespace: default}, spec: {containers: [{name: nginx, image: nginx:1.26}]}}`,
			`{"spec":{"containers":[{"image":"nginx:1.26","name":"nginx"}]}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := Evaluate(context.Background(), policy(t, tc.spec), objects(t, cluster))
			if len(res.Actions) != 1 || res.Actions[0].Type != ActionUpdate {
				t.Fatalf("actions: %v", res.Actions)
			}
			if got := string(res.Actions[0].Patch); got != tc.want {
				t.Errorf("patch:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}
