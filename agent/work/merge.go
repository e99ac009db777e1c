package work

import (
	"reflect"
	"slices"
)

// The functions here compare and merge objects as decoded from JSON
// (map[string]any, []any, string, bool, int64, float64, nil): a manifest
// against the live object it became.

// contains says whether have holds every field that want sets, with the
// same value: maps field by field, lists item by item (of equal length),
// numbers by value. A zero value (false, 0, "", null, {} or []) also
// matches a missing field, since API servers drop those when they store
// an object.
func contains(want, have any) bool {
	if have == nil && isZero(want) {
		return true
	}
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			if !contains(wv, h[k]) {
				return false
			}
		}
		return true
	case []any:
		h, ok := have.([]any)
		if !ok || len(h) != len(w) {
			return false
		}
		for i := range w {
			if !contains(w[i], h[i]) {
				return false
			}
		}
		return true
	}
	if wf, ok := number(want); ok {
		hf, ok := number(have)
		return ok && wf == hf
	}
	return reflect.DeepEqual(want, have)
}

// isZero says whether v is a zero value that an API server may drop.
func isZero(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case string:
		return x == ""
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	f, ok := number(v)
	return ok && f == 0
}

// number returns v as a float64 when it is a number.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case int32:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// merge returns have with every field of want set: maps merge field by
// field, lists of equal length item by item, and anything else (a list
// of another length, a scalar, a type change) is replaced by want's value.
// Fields that want does not set keep have's values. Neither argument is
// changed.
func merge(have, want any) any {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			h = nil
		}
		out := make(map[string]any, len(h)+len(w))
		for k, v := range h {
			out[k] = v
		}
		for k, wv := range w {
			out[k] = merge(h[k], wv)
		}
		return out
	case []any:
		h, ok := have.([]any)
		out := make([]any, len(w))
		for i := range w {
			if ok && len(h) == len(w) {
				out[i] = merge(h[i], w[i])
			} else {
				out[i] = merge(nil, w[i])
			}
		}
		return out
	}
	return want
}

// driftedFields lists, sorted, the top-level fields of want whose values
// have lacks (contains is false); within metadata it names the field below
// it, e.g. metadata.labels. apiVersion and kind are never listed.
func driftedFields(want, have map[string]any) []string {
	var fields []string
	for k, wv := range want {
		switch k {
		case "apiVersion", "kind":
		case "metadata":
			wm, _ := wv.(map[string]any)
			hm, _ := have["metadata"].(map[string]any)
			for mk, mv := range wm {
				if !contains(mv, hm[mk]) {
					fields = append(fields, "metadata."+mk)
				}
			}
		default:
			if !contains(wv, have[k]) {
				fields = append(fields, k)
			}
		}
	}
	slices.Sort(fields)
	return fields
}
