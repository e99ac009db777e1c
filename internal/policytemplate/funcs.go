package policytemplate

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Delims are the delimiters of one kind of policy template: {{ }} for
// managed-cluster templates, {{hub hub}} for hub templates.
type Delims struct {
	// Left and Right open and close an action.
	Left, Right string
	typed       *regexp.Regexp
	autoindent  *regexp.Regexp
}

// NewDelims returns the delimiters left and right, ready to Prepare text.
func NewDelims(left, right string) *Delims {
	l, r := regexp.QuoteMeta(left), regexp.QuoteMeta(right)
	return &Delims{
		Left: left, Right: right,
		typed:      regexp.MustCompile(`'(` + l + `[^{}]*\|\s*(?:toInt|toBool|toLiteral)\s*` + r + `)'`),
		autoindent: regexp.MustCompile(`(?m)^([^\n]*?)(` + l + `[^{}\n]*\|\s*)autoindent(\s*` + r + `)`),
	}
}

// Prepare rewrites template text before it is parsed, as OCM does: a
// quoted action whose last function gives a typed value (toInt, toBool,
// toLiteral) loses its YAML quotes, so that replicas: '{{ ... | toInt }}'
// becomes a number; and autoindent becomes an indent by the column at
// which its action starts, so that a multi-line value stays inside the
// YAML block it is written in.
func (d *Delims) Prepare(text string) string {
	text = d.typed.ReplaceAllString(text, "$1")
	return d.autoindent.ReplaceAllStringFunc(text, func(m string) string {
		sub := d.autoindent.FindStringSubmatch(m)
		return sub[1] + sub[2] + "autoindentFrom " + strconv.Itoa(len(sub[1])) + sub[3]
	})
}

// HelperFuncs are the template functions that read nothing, shared by
// managed-cluster and hub templates: base64enc, base64dec, indent,
// autoindent (rewritten by Prepare), toInt, toBool, toLiteral. The map is
// a text/template FuncMap and a tmplexec one (the agent's executor, which
// keeps the agent binary free of text/template's method lookups).
func HelperFuncs() map[string]any {
	return map[string]any{
		"base64enc":      func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
		"base64dec":      base64dec,
		"indent":         indent,
		"autoindentFrom": autoindentFrom,
		"autoindent": func(string) (string, error) {
			return "", fmt.Errorf("autoindent must be the last function of an action that starts its line's YAML value")
		},
		"toInt":     toInt,
		"toBool":    toBool,
		"toLiteral": func(v any) any { return v },
	}
}

func base64dec(s string) (string, error) {
	data, err := base64.StdEncoding.DecodeString(s)
	return string(data), err
}

// indent prefixes every line of s with n spaces.
func indent(n int, s string) string {
	pad := strings.Repeat(" ", n)
	return pad + strings.ReplaceAll(s, "\n", "\n"+pad)
}

// autoindentFrom prefixes every line of s but the first with n spaces: the
// first already starts where the action was.
func autoindentFrom(n int, s string) string {
	return strings.ReplaceAll(s, "\n", "\n"+strings.Repeat(" ", n))
}

func toInt(v any) (int, error) {
	switch n := v.(type) {
	case int:
		return n, nil
	case int64:
		return int(n), nil
	case float64:
		return int(n), nil
	case string:
		return strconv.Atoi(strings.TrimSpace(n))
	}
	return 0, fmt.Errorf("cannot convert %v (%T) to an integer", v, v)
}

func toBool(v any) (bool, error) {
	switch b := v.(type) {
	case bool:
		return b, nil
	case string:
		return strconv.ParseBool(strings.TrimSpace(b))
	}
	return false, fmt.Errorf("cannot convert %v (%T) to a boolean", v, v)
}
