package policytemplate_test

import (
	"fmt"
	"strings"
	"testing"
	"text/template"

	sprig "github.com/Masterminds/sprig/v3"

	"github.com/flotilla-io/flotilla/internal/policytemplate"
	"github.com/flotilla-io/flotilla/internal/tmplexec"
)

// execute runs text with the helper functions through the agent's
// executor and through text/template (the hub's), which must agree.
func execute(t *testing.T, text string, data any) (string, error) {
	t.Helper()
	fm := policytemplate.HelperFuncs()
	var want strings.Builder
	tt, wantErr := template.New("tmpl").Funcs(fm).Parse(text)
	if wantErr == nil {
		wantErr = tt.Execute(&want, data)
	}
	var got strings.Builder
	tpl, err := tmplexec.Parse("tmpl", text, fm)
	if err == nil {
		err = tpl.Execute(&got, data)
	}
	if fmt.Sprint(err) != fmt.Sprint(wantErr) || got.String() != want.String() {
		t.Fatalf("%s: the agent's executor and text/template disagree:\n got %q, %v\nwant %q, %v", text, got.String(), err, want.String(), wantErr)
	}
	return got.String(), err
}

// TestHelperFuncs pins each function that reads nothing to what OCM's
// template library gives, value or error.
func TestHelperFuncs(t *testing.T) {
	data := map[string]any{"empty": "", "n": 3, "name": "web", "list": []any{"a", "b"}, "obj": map[string]any{"k": "v"}}
	for _, tt := range []struct{ fn, text, want, wantErr string }{
		{"default", `{{ .empty | default "fallback" }} {{ .missing | default 5 }} {{ .name | default "x" }}`, "fallback 5 web", ""},
		{"toInt", `{{ "42" | toInt }} {{ " 7 " | toInt }} {{ "abc" | toInt }} {{ 2.9 | toInt }} {{ .n | toInt }} {{ true | toInt }} {{ "0x10" | toInt }}`, "42 0 0 2 3 1 16", ""},
		{"toBool", `{{ "true" | toBool }} {{ "1" | toBool }} {{ "nope" | toBool }} {{ "" | toBool }}`, "true true false false", ""},
		{"toBool of a boolean", `{{ true | toBool }}`, "", "wrong type for value; expected string; got bool"},
		{"atoi", `{{ "6" | atoi }} {{ "six" | atoi }}`, "6 0", ""},
		{"toLiteral", `{{ "[a, b]" | toLiteral }}`, "[a, b]", ""},
		{"toLiteral of lines", `{{ "a\nb" | toLiteral }}`, "", "new lines are not allowed in the string passed to the toLiteral function"},
		{"base64enc", `{{ "Templating rocks!" | base64enc }}`, "VGVtcGxhdGluZyByb2NrcyE=", ""},
		{"base64dec", `{{ "VGVtcGxhdGluZyByb2NrcyE=" | base64dec }}`, "Templating rocks!", ""},
		{"base64dec of what is not base64", `{{ "!!" | base64dec }}`, "illegal base64 data at input byte 0", ""},
		{"b64enc, b64dec", `{{ "x" | b64enc }} {{ "eA==" | b64dec }}`, "eA== x", ""},
		{"indent", `{{ "a\nb" | indent 4 }}|`, "a\n    b|", ""},
		{"autoindent outside a YAML value", `{{ "a\nb" | autoindent }}`, "", "autoindent must be the last function"},
		{"fromJSON, toJSON", `{{ (fromJSON "{\"a\":[1,2]}").a }} {{ toJSON .obj }} {{ (fromJson "{\"b\":1}").b }} {{ toRawJSON "<&>" }}`, `[1 2] {"k":"v"} 1 "<&>"`, ""},
		{"mustFromJSON of what is not JSON", `{{ mustFromJSON "{" }}`, "", "unexpected end of JSON input"},
		{"fromYAML, toYAML", `{{ (fromYAML "a: {b: c}").a.b }} {{ toYAML .obj }} {{ toYaml .list }}`, "c k: v - a\n- b", ""},
		{"protect", `{{ "s3cret" | protect }}`, "", "the protect template function is not enabled in this mode"},
		{"env", `{{ env "HOME" }}`, "", "use of denylisted template function: function 'env' is considered a security risk"},
		{"expandenv", `{{ expandenv "$HOME" }}`, "", "use of denylisted template function: function 'expandenv' is considered a security risk"},
		{"Sprig strings", `{{ "Hello" | lower | replace "l" "L" | quote }} {{ "a,b" | splitList "," | join "+" }} {{ trunc 2 "abc" }} {{ hasPrefix "we" .name }}`, `"heLLo" a+b ab true`, ""},
		{"Sprig lists and dicts", `{{ list 1 2 3 | last }} {{ (dict "a" 1).a }} {{ keys .obj | sortAlpha }} {{ has "a" .list }} {{ ternary "y" "n" true }}`, "3 1 [k] true y", ""},
		{"Sprig math and semver", `{{ add 1 2 }} {{ mul 2 3 }} {{ until 3 }} {{ semverCompare ">=1.2" "1.3.0" }}`, "3 6 [0 1 2] true", ""},
		{"Sprig fail", `{{ fail "stop here" }}`, "", "error calling fail: stop here"},
		{"Sprig regex", `{{ regexMatch "^w" .name }} {{ regexFind "[0-9]+" "v12x" }}`, "true 12", ""},
	} {
		t.Run(tt.fn, func(t *testing.T) {
			got, err := execute(t, tt.text, data)
			switch {
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("%s: error %v, want …%s…", tt.text, err, tt.wantErr)
			case tt.wantErr == "" && err != nil:
				t.Errorf("%s: %v", tt.text, err)
			case tt.wantErr == "" && got != tt.want:
				t.Errorf("%s = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

// TestSprigFunctions checks that every Sprig function OCM offers is
// offered: all of Sprig's.
func TestSprigFunctions(t *testing.T) {
	fm := policytemplate.HelperFuncs()
	for name := range sprig.GenericFuncMap() {
		if _, ok := fm[name]; !ok {
			t.Errorf("Sprig's %s is not offered", name)
		}
	}
}

// TestPrepareTypedValues resolves object definitions as the agent and the
// hub do (JSON to YAML, Prepare, execute, back to JSON): a value whose
// templates end in toInt, toBool or toLiteral, alone or inside if/else,
// becomes typed; copyConfigMapData gives a map.
func TestPrepareTypedValues(t *testing.T) {
	long := strings.Repeat("x", 100)
	for _, tt := range []struct{ name, in, want string }{
		{"toInt alone", `{"replicas":"{{ \"3\" | toInt }}"}`, `{"replicas":3}`},
		{"toInt inside if/else", `{"spec":{"replicas":"{{ if eq .env \"prod\" }}{{ \"3\" | toInt }}{{ else }}{{ \"1\" | toInt }}{{ end }}"}}`, `{"spec":{"replicas":3}}`},
		{"toBool inside if/else", `{"paused":"{{ if .missing }}{{ \"false\" | toBool }}{{ else }}{{ \"true\" | toBool }}{{ end }}"}`, `{"paused":true}`},
		{"toInt of a word", `{"replicas":"{{ \"many\" | toInt }}"}`, `{"replicas":0}`},
		{"toLiteral in a list", `{"ports":["{{ \"[80, 443]\" | toLiteral }}"]}`, `{"ports":[[80,443]]}`},
		{"a long line stays one line", `{"a":"{{ if eq .env \"prod\" }}{{ \"3\" | toInt }}{{ else }}{{ \"1\" | toInt }}{{ end }}","b":"` + long + `"}`, `{"a":3,"b":"` + long + `"}`},
		{"no typed function keeps the string", `{"replicas":"{{ \"3\" }}"}`, `{"replicas":"3"}`},
		{"yes stays a string", `{"a":"{{ \"yes\" }}","b":"{{ \"on\" | toLiteral }}"}`, `{"a":"yes","b":"on"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			y, err := policytemplate.JSONToYAML([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			text := policytemplate.ManagedClusterDelims.Prepare(string(y))
			out, err := execute(t, text, map[string]any{"env": "prod"})
			if err != nil {
				t.Fatalf("%v\n%s", err, text)
			}
			j, err := policytemplate.YAMLToJSON([]byte(out))
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if string(j) != tt.want {
				t.Errorf("got %s, want %s\n(YAML resolved:\n%s)", j, tt.want, out)
			}
		})
	}
}
