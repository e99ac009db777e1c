package policytemplate

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	sprig "github.com/Masterminds/sprig/v3"
	"github.com/spf13/cast"
	yamlv3 "go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"
)

// Delims are the delimiters of one kind of policy template: {{ }} for
// managed-cluster templates, {{hub hub}} for hub templates.
type Delims struct {
	// Left and Right open and close an action.
	Left, Right string
	// typedEnd finds an action whose last function gives a typed value.
	typedEnd   *regexp.Regexp
	autoindent *regexp.Regexp
}

// NewDelims returns the delimiters left and right, ready to Prepare text.
func NewDelims(left, right string) *Delims {
	l, r := regexp.QuoteMeta(left), regexp.QuoteMeta(right)
	return &Delims{
		Left: left, Right: right,
		typedEnd:   regexp.MustCompile(`\|\s*(?:toInt|toBool|toLiteral)\s*-?` + r + `|\b(?:copyConfigMapData|copySecretData)\b`),
		autoindent: regexp.MustCompile(`(?m)^([^\n]*?)(` + l + `[^{}\n]*\|\s*)autoindent(\s*` + r + `)`),
	}
}

// Prepare rewrites template text (YAML, as JSONToYAML writes it) before it
// is parsed, as OCM does: a single-quoted value made of actions, one of
// which ends in a function that gives a typed value (toInt, toBool,
// toLiteral) or copies a map (copyConfigMapData, copySecretData), loses
// its quotes, so that replicas: '{{ if … }}{{ 3 | toInt }}{{ else }}1{{ end }}'
// becomes a number; and autoindent becomes an indent by the column at
// which its action starts, so that a multi-line value stays inside the
// YAML block it is written in.
func (d *Delims) Prepare(text string) string {
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		lines[i] = d.unquoteTyped(line)
	}
	text = strings.Join(lines, "\n")
	return d.autoindent.ReplaceAllStringFunc(text, func(m string) string {
		sub := d.autoindent.FindStringSubmatch(m)
		return sub[1] + sub[2] + "autoindentFrom " + strconv.Itoa(len(sub[1])) + sub[3]
	})
}

// unquoteTyped removes the quotes of a line's single-quoted value when
// the value is templates that give a typed value.
func (d *Delims) unquoteTyped(line string) string {
	trimmed := strings.TrimRight(line, " \t")
	if !strings.HasSuffix(trimmed, "'") || !strings.Contains(trimmed, d.Left) {
		return line
	}
	// The value starts at the quote after "key: ", "- " or the indentation.
	start := strings.Index(trimmed, "'"+d.Left)
	if start < 0 {
		return line
	}
	prefix := strings.TrimSpace(trimmed[:start])
	if prefix != "" && prefix != "-" && !strings.HasSuffix(prefix, ":") {
		return line
	}
	value := trimmed[start+1 : len(trimmed)-1]
	if !strings.HasSuffix(value, d.Right) || !d.typedEnd.MatchString(value) || strings.Contains(strings.ReplaceAll(value, "''", ""), "'") {
		return line
	}
	return trimmed[:start] + strings.ReplaceAll(value, "''", "'")
}

// JSONToYAML turns JSON into the YAML that templates are resolved in, as
// OCM writes it: two-space indentation and no line wrapping, so that a
// long value stays on its line (a wrapped one would split its actions).
func JSONToYAML(j []byte) ([]byte, error) {
	var obj any
	if err := yamlv3.Unmarshal(j, &obj); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := yamlv3.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(obj); err != nil {
		return nil, err
	}
	return b.Bytes(), enc.Close()
}

// YAMLToJSON turns the YAML a template resolved to into JSON, reading it
// as OCM does (YAML 1.2: "yes" and "on" stay strings).
func YAMLToJSON(y []byte) ([]byte, error) {
	var obj any
	if err := yamlv3.Unmarshal(y, &obj); err != nil {
		return nil, err
	}
	out, err := json.Marshal(obj)
	if err != nil {
		// Keys that are not strings: as Kubernetes reads YAML.
		return sigsyaml.YAMLToJSON(y)
	}
	return out, nil
}

// Errors of the functions, in OCM's words (go-template-utils).
var (
	// ErrInvalidInput: a function was given an empty name or key.
	ErrInvalidInput = errors.New("the input is invalid")
	// ErrNewLinesNotAllowed: toLiteral of a multi-line string.
	ErrNewLinesNotAllowed = errors.New("new lines are not allowed in the string passed to the toLiteral function")
	// ErrProtectNotEnabled: protect where no encryption key is configured.
	ErrProtectNotEnabled = errors.New("the protect template function is not enabled in this mode")
	// ErrDenylisted: a function that would read the process's environment.
	ErrDenylisted = errors.New("use of denylisted template function")
	// ErrMissingAPIResource: lookup of a kind the API server does not serve.
	ErrMissingAPIResource = errors.New("one or more API resources are not installed on the API server")
	// ErrRestrictedNamespace: a hub template read outside the policy's namespace.
	ErrRestrictedNamespace = errors.New("the namespace argument is restricted")
)

// denylisted are the Sprig functions OCM never offers: they read the
// environment of the process that resolves the template.
var denylisted = []string{"env", "expandenv"}

// HelperFuncs are the template functions that read nothing, shared by
// managed-cluster and hub templates, as OCM's template library offers
// them: Sprig's functions (but env and expandenv, which fail), and
// base64enc, base64dec (b64enc, b64dec), indent, autoindent (rewritten by
// Prepare), atoi, toInt, toBool, toLiteral, fromJSON, toJSON,
// toRawJSON (and their must forms), fromYAML, toYAML, protect (which
// fails: no encryption key). The map is a text/template FuncMap and a
// tmplexec one (the agent's executor, which keeps the agent binary free
// of text/template's method lookups).
func HelperFuncs() map[string]any {
	m := sprig.GenericFuncMap()
	for _, name := range denylisted {
		m[name] = func(...any) (any, error) {
			return nil, fmt.Errorf("%w: function '%s' is considered a security risk", ErrDenylisted, name)
		}
	}
	for name, fn := range map[string]any{
		"base64enc":      base64enc,
		"base64dec":      base64dec,
		"b64enc":         base64enc,
		"b64dec":         base64dec,
		"indent":         indent,
		"autoindentFrom": autoindentFrom,
		"autoindent": func(string) (string, error) {
			return "", errors.New("autoindent must be the last function of an action that starts its line's YAML value")
		},
		"atoi":          atoi,
		"toInt":         cast.ToInt,
		"toBool":        toBool,
		"toLiteral":     toLiteral,
		"fromJSON":      m["fromJson"],
		"mustFromJSON":  m["mustFromJson"],
		"toJSON":        m["toJson"],
		"mustToJSON":    m["mustToJson"],
		"toRawJSON":     m["toRawJson"],
		"mustToRawJSON": m["mustToRawJson"],
		"fromYAML":      fromYAML,
		"fromYaml":      fromYAML,
		"toYAML":        toYAML,
		"toYaml":        toYAML,
		"protect":       func(string) (string, error) { return "", ErrProtectNotEnabled },
	} {
		m[name] = fn
	}
	return m
}

func base64enc(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// base64dec decodes s; what cannot be decoded gives the error's text, as
// OCM's does.
func base64dec(s string) string {
	data, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return err.Error()
	}
	return string(data)
}

// indent prefixes every line of s but the first with n spaces: the first
// follows the text before the action (OCM trims it, and any whitespace
// around the result).
func indent(n int, s string) string {
	pad := strings.Repeat(" ", n)
	return strings.TrimSpace(pad + strings.ReplaceAll(s, "\n", "\n"+pad))
}

// autoindentFrom prefixes every line of s but the first with n spaces: the
// first already starts where the action was.
func autoindentFrom(n int, s string) string {
	return strings.ReplaceAll(s, "\n", "\n"+strings.Repeat(" ", n))
}

// atoi is strconv.Atoi, 0 for what is not a number.
func atoi(s string) int {
	i, _ := strconv.Atoi(s)
	return i
}

// toBool is strconv.ParseBool, false for what is not a boolean.
func toBool(s string) bool {
	b, _ := strconv.ParseBool(s)
	return b
}

func toLiteral(s string) (string, error) {
	if strings.Contains(s, "\n") {
		return "", ErrNewLinesNotAllowed
	}
	return s, nil
}

// toYAML writes v as YAML, two-space indented, without the final newline
// (pipe it to indent or autoindent to place it in a block).
func toYAML(v any) (out string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml marshal error: %v", r)
		}
	}()
	var b bytes.Buffer
	enc := yamlv3.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

func fromYAML(s string) (any, error) {
	var v any
	err := yamlv3.Unmarshal([]byte(s), &v)
	return v, err
}
