package health

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// find is the value called name.
func find(values []workv1.FeedbackValue, name string) (workv1.FieldValue, bool) {
	for _, v := range values {
		if v.Name == name {
			return v.Value, true
		}
	}
	return workv1.FieldValue{}, false
}

// text is a value's string form, as a feedback check compares it: 3, true,
// Ready, or compact JSON with sorted keys for a JsonRaw value.
func text(v workv1.FieldValue) (string, error) {
	switch {
	case v.Type == workv1.Integer && v.Integer != nil:
		return strconv.FormatInt(*v.Integer, 10), nil
	case v.Type == workv1.String && v.String != nil:
		return *v.String, nil
	case v.Type == workv1.Boolean && v.Boolean != nil:
		return strconv.FormatBool(*v.Boolean), nil
	case v.Type == workv1.JSONRaw && v.JSONRaw != nil:
		return canonicalJSON(*v.JSONRaw)
	}
	return "", fmt.Errorf("reported as type %q without a value of that type", v.Type)
}

// literal is an equals literal in the string form of a value of type t,
// so that True matches a Boolean true and {"a": 1} a JsonRaw {"a":1}.
func literal(s string, t workv1.ValueType) string {
	switch t {
	case workv1.Boolean:
		if b, err := strconv.ParseBool(s); err == nil {
			return strconv.FormatBool(b)
		}
	case workv1.Integer:
		if i, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
			return strconv.FormatInt(i, 10)
		}
	case workv1.JSONRaw:
		if c, err := canonicalJSON(s); err == nil {
			return c
		}
	}
	return s
}

// canonicalJSON re-encodes JSON text compactly with sorted keys.
func canonicalJSON(s string) (string, error) {
	v, err := parseJSON(s)
	if err != nil {
		return "", err
	}
	out, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(out), nil
}

// parseJSON decodes JSON text, whole numbers as int64 (as CEL's int, which
// Integer values are too) and others as float64.
func parseJSON(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("reported JsonRaw value is not JSON: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("reported JsonRaw value %q holds more than one JSON value", s)
	}
	return numbers(v), nil
}

// numbers replaces the json.Numbers in v.
func numbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case []any:
		for i := range x {
			x[i] = numbers(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = numbers(x[k])
		}
	}
	return v
}

// celValues is the values variable of an expression: each value by name,
// typed as it was reported.
func celValues(values []workv1.FeedbackValue) (map[string]any, error) {
	out := make(map[string]any, len(values))
	for _, fv := range values {
		v := fv.Value
		switch {
		case v.Type == workv1.Integer && v.Integer != nil:
			out[fv.Name] = *v.Integer
		case v.Type == workv1.String && v.String != nil:
			out[fv.Name] = *v.String
		case v.Type == workv1.Boolean && v.Boolean != nil:
			out[fv.Name] = *v.Boolean
		case v.Type == workv1.JSONRaw && v.JSONRaw != nil:
			parsed, err := parseJSON(*v.JSONRaw)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", fv.Name, err)
			}
			out[fv.Name] = parsed
		default:
			return nil, fmt.Errorf("%s: reported as type %q without a value of that type", fv.Name, v.Type)
		}
	}
	return out, nil
}

// Bounds of the values a message lists: the message ends up in the
// replica set's condition, one per failed cluster.
const (
	maxListedValue  = 64
	maxListedValues = 512
)

// listValues lists values for a message: AvailableReplicas=1, Replicas=3.
func listValues(values []workv1.FeedbackValue) string {
	var b bytes.Buffer
	for i, v := range values {
		if i > 0 {
			b.WriteString(", ")
		}
		s, err := text(v.Value)
		if err != nil {
			s = "?"
		}
		b.WriteString(v.Name + "=" + shorten(s, maxListedValue))
	}
	return shorten(b.String(), maxListedValues)
}

// shorten cuts s to at most n bytes, on a rune boundary, marking the cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
