package tmplexec_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"text/template"

	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/flotilla-io/flotilla/internal/policytemplate"
	"github.com/flotilla-io/flotilla/internal/tmplexec"
)

// objectContext is shaped as the policy engine's dot of a template
// resolved per object.
type objectContext struct {
	ObjectNamespace string
	ObjectName      string
	Object          map[string]any
	hidden          string
}

// jsonData decodes doc as the policy engine's data are decoded.
func jsonData(doc string) map[string]any {
	var m map[string]any
	if err := utiljson.Unmarshal([]byte(doc), &m); err != nil {
		panic(err)
	}
	return m
}

var errNotFound = errors.New("failed to get the configmap site from policies: not found")

// funcs are the policy templates' helpers and functions shaped as the
// engine's reading ones.
func funcs() map[string]any {
	m := policytemplate.HelperFuncs()
	m["fromConfigMap"] = func(ns, name, key string) (string, error) {
		if name == "site" {
			return "", errNotFound
		}
		return ns + "/" + name + "/" + key, nil
	}
	m["lookup"] = func(apiVersion, kind, ns, name string, selectors ...string) (map[string]any, error) {
		if name == "" {
			return map[string]any{"kind": kind + "List", "items": []any{
				map[string]any{"metadata": map[string]any{"name": "a", "labels": map[string]any{"x": "1"}}},
				map[string]any{"metadata": map[string]any{"name": "b"}}}}, nil
		}
		if name == "missing" {
			return map[string]any{}, nil
		}
		return map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name, "namespace": ns},
			"data": map[string]any{"replicas": "3", "enabled": "true"}, "spec": map[string]any{"replicas": int64(2)}}, nil
	}
	m["skipObject"] = func(args ...any) (string, error) {
		if len(args) > 1 {
			return "", fmt.Errorf("skipObject only accepts one optional boolean argument but received %d", len(args))
		}
		return "", nil
	}
	m["panics"] = func() string { panic("boom") }
	m["fn"] = func() func() string { return func() string { return "called" } }
	m["pint"] = func() *int { i := 7; return &i }
	m["nilmap"] = func() map[string]any { return nil }
	return m
}

var datas = map[string]any{
	"nil": nil,
	"json": jsonData(`{"name":"web","ns":"prod","n":3,"f":2.5,"t":true,"no":false,"empty":"","null":null,
		"list":[1,"two",{"k":"v"},[3]],"emptyList":[],"labels":{"b":"2","a":"1","c":"3"},
		"nested":{"a":{"b":{"c":"deep"}}},"pct":"50%","html":"<a href='x'>&\"</a>","multi":"line1\nline2"}`),
	"object": &objectContext{ObjectNamespace: "prod", ObjectName: "web",
		Object: map[string]any{"metadata": map[string]any{"name": "web", "labels": map[string]any{"app": "web"}}, "spec": map[string]any{"replicas": int64(3)}}},
	"objectNil": &objectContext{ObjectNamespace: "prod", ObjectName: "gone"},
	"custom": struct {
		DefaultMessage string
		Policy         map[string]any
	}{"Compliant; notification - namespaces [prod] found", map[string]any{"metadata": map[string]any{"name": "cp"},
		"status": map[string]any{"compliant": "Compliant", "relatedObjects": []any{
			map[string]any{"compliant": "Compliant", "object": map[string]any{"kind": "Namespace", "metadata": map[string]any{"name": "prod"}}}}}}},
	"int64": map[string]any{"n": int64(4), "u": uint(4), "i": 4, "f": float64(4), "s": "4"},
}

// templates run against every data; each must give text/template's output
// and error.
var templates = []string{
	``, `plain text`, `{{.}}`, `{{.name}}`, `{{ .name }}-{{.ns}}`, `{{.missing}}`, `{{.missing.deeper}}`,
	`{{.nested.a.b.c}}`, `{{.nested.a.x.c}}`, `{{.name.x}}`, `{{.n.x}}`, `{{.list.x}}`,
	`{{.ObjectNamespace}}/{{.ObjectName}}`, `{{.Object.metadata.name}}`, `{{.Object.spec.replicas}}`,
	`{{.Object.metadata.labels.app}}`, `{{.NoSuchField}}`, `{{.hidden}}`, `{{$.ObjectName}}`,
	`{{.DefaultMessage}} ({{.Policy.metadata.name}})`, `{{range .Policy.status.relatedObjects}}{{.object.metadata.name}}={{.compliant}};{{end}}`,
	`{{.n}} {{.f}} {{.t}} {{.no}} {{.null}} {{.empty}} {{.list}} {{.labels}} {{.emptyList}}`,
	`{{if .t}}yes{{else}}no{{end}}`, `{{if .no}}yes{{else if .n}}n{{else}}none{{end}}`, `{{if .missing}}a{{end}}b`,
	`{{if .labels}}L{{end}}{{if .emptyList}}E{{end}}{{if .empty}}S{{end}}{{if .null}}N{{end}}`,
	`{{with .nested.a}}{{.b.c}}{{else}}none{{end}}`, `{{with .missing}}x{{else}}none{{end}}`, `{{with $x := .name}}{{$x}}{{.}}{{end}}`,
	`{{with .missing}}x{{else with .name}}{{.}}{{end}}`,
	`{{range .list}}[{{.}}]{{end}}`, `{{range $i, $e := .list}}{{$i}}:{{$e}} {{end}}`, `{{range $e := .list}}{{$e}}{{end}}`,
	`{{range $k, $v := .labels}}{{$k}}={{$v}},{{end}}`, `{{range .labels}}{{.}}{{end}}`, `{{range .emptyList}}x{{else}}empty{{end}}`,
	`{{range .missing}}x{{else}}nothing{{end}}`, `{{range .name}}x{{end}}`, `{{range .n}}{{.}}{{end}}`, `{{range 3}}{{.}}{{end}}`,
	`{{range $i, $e := 3}}{{.}}{{end}}`, `{{range .list}}{{if eq (printf "%v" .) "two"}}{{break}}{{end}}{{.}}{{end}}`,
	`{{range .list}}{{if eq (printf "%v" .) "two"}}{{continue}}{{end}}{{.}}{{end}}`,
	`{{$x := 1}}{{range .list}}{{$x = .}}{{end}}{{$x}}`, `{{$i := 0}}{{range $i = .list}}{{end}}{{$i}}`,
	`{{range $i, $e = .list}}{{end}}`, `{{$a := 0}}{{$b := 0}}{{range $a, $b = .list}}{{end}}{{$a}}{{$b}}`,
	`{{$x}}`, `{{$x = 1}}`, `{{$x := .name}}{{$x := "shadow"}}{{$x}}`, `{{$.name}}{{range .list}}{{$.ns}}{{end}}`,
	`{{.name | printf "%s!"}}`, `{{printf "%d-%s" 3 "x"}}`, `{{printf "%v" .missing}}`, `{{print .name 1 2.5 true nil}}`,
	`{{println "a" "b"}}`, `{{printf "%5.2f" .f}}`, `{{printf "%s" .pct}}`, `{{.pct}}%`, `{{printf .pct}}`,
	`{{len .list}} {{len .name}} {{len .labels}}`, `{{len .n}}`, `{{len .missing}}`, `{{len nil}}`, `{{len}}`,
	`{{index .list 2 "k"}}`, `{{index .list 9}}`, `{{index .labels "a"}}`, `{{index .labels "zz"}}`, `{{index .list "x"}}`,
	`{{index .missing "a"}}`, `{{index .name 0}}`, `{{index .labels 1}}`, `{{index .list -1}}`, `{{index .n 0}}`, `{{index}}`,
	`{{slice .name 1 2}}`, `{{slice .list 1}}`, `{{slice .name 2 1}}`, `{{slice .name 1 2 3}}`, `{{slice .n 1}}`,
	`{{slice .list 0 1 2 3}}`, `{{slice .list 0 1 2}}`,
	`{{not .t}} {{not .missing}} {{not .list}}`, `{{not}}`, `{{not 1 2}}`,
	`{{and .t .n}} {{and .t .no .n}} {{or .no .empty .name}} {{or .no .empty}}`, `{{and}}`, `{{or .missing}}`,
	`{{and .no (fail)}}`, `{{or .t (fail)}}`, `{{.t | and .n}}`, `{{.no | or .empty}}`,
	`{{eq .name "web"}} {{eq .n 3}} {{eq .n 3.0}} {{eq .f 2.5}} {{eq .t true}} {{eq .name "a" "b" "web"}}`,
	`{{eq .name 1}}`, `{{eq .name}}`, `{{eq .missing nil}}`, `{{eq .null nil}}`, `{{eq .list .list}}`, `{{eq .labels nil}}`,
	`{{ne .name "x"}} {{lt 1 2}} {{le 2 2}} {{gt "b" "a"}} {{ge 1.5 2.5}}`, `{{lt .t .no}}`, `{{lt .name 1}}`, `{{lt .list 1}}`,
	`{{eq .i .u}} {{lt .i .u}} {{eq .n .i}} {{lt .n .f}}`, `{{eq .s 4}}`,
	`{{html .html}} {{js .html}} {{urlquery .html}} {{html 1 "<"}} {{js "\u0001é\u2028"}}`,
	`{{call .name}}`, `{{call fn}}`, `{{call (fn)}}`, `{{call}}`, `{{call .missing}}`,
	`{{(fromConfigMap "ns" "cm" "key")}}`, `{{fromConfigMap "" "site" "dns"}}`, `{{fromConfigMap "a" "b"}}`, `{{fromConfigMap 1 "b" "c"}}`,
	`{{fromConfigMap .name .ns .n}}`, `{{fromConfigMap .name .ns .missing}}`, `{{"k" | fromConfigMap "ns" "cm"}}`,
	`{{(lookup "v1" "ConfigMap" "ns" "cm").data.replicas}}`, `{{(lookup "v1" "ConfigMap" "ns" "missing").data.replicas}}`,
	`{{range (lookup "v1" "ConfigMap" "ns" "").items}}{{.metadata.name}}{{end}}`, `{{(lookup "v1" "ConfigMap" "ns" "cm").spec.replicas | toInt}}`,
	`{{$cm := lookup "v1" "ConfigMap" "ns" "cm"}}{{$cm.metadata.name}}/{{$cm.metadata.namespace}}`,
	`{{lookup "v1" "ConfigMap" "ns" "cm" "a=b" "c"}}`, `{{lookup "v1" "ConfigMap"}}`,
	`{{.name | base64enc}} {{"d2Vi" | base64dec}} {{"!!" | base64dec}}`, `{{.multi | indent 4}}`, `{{indent 2 .multi}}`,
	`{{indent .n .multi}}`, `{{indent "2" .multi}}`, `{{indent 2.5 .multi}}`, `{{.multi | autoindentFrom 2}}`, `{{autoindent .multi}}`,
	`{{toInt "42"}} {{toInt .n}} {{toInt 3}} {{"x" | toInt}}`, `{{toBool "true"}} {{toBool .t}} {{toBool 1}}`, `{{toLiteral .list}}`,
	`{{skipObject}}`, `{{skipObject true}}`, `{{skipObject 1 2}}`, `{{panics}}`, `{{fn}}`, `{{pint}}`, `{{nilmap}}`, `{{nilmap.x}}`,
	`{{(nilmap).x}}`, `{{(pint).x}}`, `{{.name 1}}`, `{{"x" | .name}}`, `{{$ 1}}`, `{{1 2}}`, `{{"x" 1}}`, `{{true}} {{1}} {{1.5}} {{0x10}} {{'a'}} {{1e3}} {{2i}}`,
	`{{99999999999999999999}}`, `{{printf "%T %T %T %T" 1 1.0 'a' 0x1p4}}`, `{{-1 | printf "%d"}}`, `{{nil}}`, `{{.ObjectName 1}}`, `{{.Object 1}}`,
	`{{(.).name}}`, `{{(.nested).a.b.c}}`, `{{(printf "%s" .name).x}}`,
	`{{define "t"}}[{{.}}]{{end}}{{template "t" .name}}{{template "t"}}`, `{{template "nope"}}`,
	`{{define "r"}}{{.}}{{if .}}{{template "r" slice . 1}}{{end}}{{end}}{{template "r" .name}}`,
	`{{block "b" .ns}}<{{.}}>{{end}}`, `{{define "e"}}{{.missing.x | toInt}}{{end}}{{template "e" .}}`,
	`{{/* comment */}}a{{- /* c */ -}} b`, "a  {{- .name -}}  b", `{{if .t}}{{else}}{{end}}x`,
	`{{with .labels}}{{range $k, $v := .}}{{$k}}{{end}}{{end}}`, `{{range .list}}{{range .}}{{.}}{{end}}{{end}}`,
	`{{if .list}}{{range .list}}{{index . 0}}{{end}}{{end}}`, `{{if eq .ObjectName "web"}}{{.Object.metadata.name}}{{end}}`,
	`{{ if (lookup "v1" "ConfigMap" "ns" "cm").data.enabled | toBool }}on{{ end }}`,
	`{{fail}}`, `{{printf "%d" (fail)}}`, `{{.name | fail}}`,
}

func parseBoth(t testing.TB, text string) (*template.Template, error, *tmplexec.Template, error) {
	fm := funcs()
	fm["fail"] = func(args ...any) (string, error) { return "", errors.New("failed on purpose") }
	want, wantErr := template.New("tmpl").Funcs(fm).Parse(text)
	got, gotErr := tmplexec.Parse("tmpl", text, fm)
	return want, wantErr, got, gotErr
}

// compare runs text with data through text/template and tmplexec.
func compare(t testing.TB, text string, dataName string, data any) {
	t.Helper()
	want, wantErr, got, gotErr := parseBoth(t, text)
	if fmt.Sprint(wantErr) != fmt.Sprint(gotErr) {
		t.Fatalf("%q: parse error\n got %v\nwant %v", text, gotErr, wantErr)
	}
	if wantErr != nil {
		return
	}
	var wantOut, gotOut strings.Builder
	wantErr = want.Execute(&wantOut, data)
	gotErr = got.Execute(&gotOut, data)
	if fmt.Sprint(wantErr) != fmt.Sprint(gotErr) {
		t.Errorf("%q with %s: error\n got %v\nwant %v", text, dataName, gotErr, wantErr)
	}
	if wantOut.String() != gotOut.String() {
		t.Errorf("%q with %s: output\n got %q\nwant %q", text, dataName, gotOut.String(), wantOut.String())
	}
	if wantErr != nil && errors.Is(wantErr, errNotFound) != errors.Is(gotErr, errNotFound) {
		t.Errorf("%q with %s: the function's error is not wrapped as text/template wraps it", text, dataName)
	}
}

func TestSameAsTextTemplate(t *testing.T) {
	for _, text := range templates {
		for name, data := range datas {
			compare(t, text, name, data)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, text := range []string{`{{`, `{{.name`, `{{nosuch}}`, `{{end}}`, `{{if}}{{end}}`, `{{range .x}}`, `{{break}}`,
		`{{define "a"}}x{{end}}{{define "a"}}y{{end}}`, `{{.name | 1}}`, `{{"unterminated}}`, `{{(.x}}`, `{{nil.x}}`, `{{1.x}}`} {
		_, wantErr, _, gotErr := parseBoth(t, text)
		if wantErr == nil || fmt.Sprint(wantErr) != fmt.Sprint(gotErr) {
			t.Errorf("%q:\n got %v\nwant %v", text, gotErr, wantErr)
		}
	}
}

func FuzzSameAsTextTemplate(f *testing.F) {
	for _, text := range templates {
		f.Add(text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 300 || strings.Contains(text, "template") || strings.Contains(text, "block") {
			// Recursion 100,000 templates deep is slow in both.
			return
		}
		for _, w := range strings.FieldsFunc(text, func(r rune) bool { return r < '0' || r > '9' }) {
			if len(w) > 3 && strings.Contains(text, "range") {
				return // range over a large number
			}
		}
		for name, data := range datas {
			compare(t, text, name, data)
		}
	})
}
