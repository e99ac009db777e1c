package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// decodeObject parses a JSON object, keeping numbers as json.Number so that
// integers beyond 2^53 survive a round trip unchanged.
func decodeObject(raw []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, fmt.Errorf("null")
	}
	return obj, nil
}

// deepCopyJSON copies a decoded JSON value.
func deepCopyJSON(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = deepCopyJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = deepCopyJSON(e)
		}
		return out
	default:
		return v
	}
}

// nested returns the value at path, or nil when any step is missing or not
// an object.
func nested(obj map[string]any, path ...string) any {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

// nestedMap returns the object at path, creating missing objects on the way
// when create is set. It fails when a step holds something other than an
// object.
func nestedMap(obj map[string]any, create bool, path ...string) (map[string]any, error) {
	cur := obj
	for i, p := range path {
		next, ok := cur[p]
		if !ok || next == nil {
			if !create {
				return nil, nil
			}
			m := map[string]any{}
			cur[p] = m
			cur = m
			continue
		}
		m, ok := next.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s is %T, not an object", strings.Join(path[:i+1], "."), next)
		}
		cur = m
	}
	return cur, nil
}

// working is a manifest being rendered, held as an object or as JSON,
// whichever the last change needed, so that typed changes and JSON patches
// can follow one another without decoding more often than necessary.
type working struct {
	obj map[string]any // set when held as an object
	raw []byte         // set when held as JSON
}

// object returns the manifest as an object, decoding it if needed.
func (w *working) object() (map[string]any, error) {
	if w.obj == nil {
		obj, err := decodeObject(w.raw)
		if err != nil {
			return nil, fmt.Errorf("the patched manifest is not a JSON object: %w", err)
		}
		w.obj, w.raw = obj, nil
	}
	return w.obj, nil
}

// bytes returns the manifest as JSON, encoding it if needed.
func (w *working) bytes() ([]byte, error) {
	if w.raw == nil {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(w.obj); err != nil {
			return nil, err
		}
		w.raw, w.obj = bytes.TrimRight(buf.Bytes(), "\n"), nil
	}
	return w.raw, nil
}

// setBytes replaces the manifest with JSON.
func (w *working) setBytes(raw []byte) { w.raw, w.obj = raw, nil }
