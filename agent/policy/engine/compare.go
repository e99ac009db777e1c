package engine

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"

	"k8s.io/apimachinery/pkg/api/resource"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

// lastApplied is left out of annotation comparisons: kubectl writes it.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// mode is how strictly a template value is compared.
type mode int

const (
	// mustHave: every key and item of the template, extra ones are fine.
	mustHave mode = iota
	// mustOnlyHave: maps and lists equal the template (list order ignored).
	mustOnlyHave
)

// modeOf maps a compliance type to a comparison mode; mustnothave matches
// objects the way musthave does.
func modeOf(ct policyv1.ComplianceType) mode {
	if ct.Is(policyv1.MustOnlyHave) {
		return mustOnlyHave
	}
	return mustHave
}

// compareObject lists where obj differs from tmpl. Of the template's
// top-level keys, apiVersion and kind are not compared (the object was
// found by them), and of metadata only labels and annotations (compared
// in metaMode); every other key, status included, is compared in m.
func compareObject(tmpl, obj map[string]any, m, metaMode mode) []policyv1.FieldDiff {
	var diffs []policyv1.FieldDiff
	for _, k := range sortedKeys(tmpl) {
		switch k {
		case "apiVersion", "kind":
		case "metadata":
			tm, _ := tmpl[k].(map[string]any)
			om, _ := obj[k].(map[string]any)
			for _, mk := range []string{"labels", "annotations"} {
				tv, ok := tm[mk]
				if !ok {
					continue
				}
				ov, present := om[mk]
				tv, ov = withoutLastApplied(mk, tv), withoutLastApplied(mk, ov)
				diffs = append(diffs, compareValue(join("metadata", mk), tv, ov, present, metaMode)...)
			}
		default:
			ov, present := obj[k]
			diffs = append(diffs, compareValue(k, tmpl[k], ov, present, m)...)
		}
	}
	return diffs
}

// withoutLastApplied drops kubectl's annotation from annotations.
func withoutLastApplied(key string, v any) any {
	m, ok := v.(map[string]any)
	if key != "annotations" || !ok {
		return v
	}
	if _, has := m[lastApplied]; !has {
		return v
	}
	out := make(map[string]any, len(m))
	for k, val := range m {
		if k != lastApplied {
			out[k] = val
		}
	}
	return out
}

// compareValue compares template value t with the object's value o at path;
// present says whether the object has the field at all.
func compareValue(path string, t, o any, present bool, m mode) []policyv1.FieldDiff {
	switch tv := t.(type) {
	case map[string]any:
		om, ok := o.(map[string]any)
		if !ok {
			if (!present || o == nil) && len(tv) == 0 {
				return nil
			}
			return []policyv1.FieldDiff{diff(path, t, o, present)}
		}
		return compareMap(path, tv, om, m)
	case []any:
		ol, ok := o.([]any)
		if !ok {
			if (!present || o == nil) && len(tv) == 0 {
				return nil
			}
			return []policyv1.FieldDiff{diff(path, t, o, present)}
		}
		return compareList(path, tv, ol, m)
	default:
		if !present || o == nil {
			// An absent field equals its zero value, as Kubernetes omits
			// empty fields: "hostNetwork: false" matches no hostNetwork.
			if isZero(t) {
				return nil
			}
			return []policyv1.FieldDiff{diff(path, t, o, present)}
		}
		if !scalarEqual(t, o) {
			return []policyv1.FieldDiff{diff(path, t, o, present)}
		}
		return nil
	}
}

// compareMap compares two maps: each key of the template, and for
// mustonlyhave no other keys.
func compareMap(path string, t, o map[string]any, m mode) []policyv1.FieldDiff {
	var diffs []policyv1.FieldDiff
	for _, k := range sortedKeys(t) {
		ov, present := o[k]
		diffs = append(diffs, compareValue(join(path, k), t[k], ov, present, m)...)
	}
	if m == mustOnlyHave {
		for _, k := range sortedKeys(o) {
			if _, ok := t[k]; !ok && o[k] != nil {
				diffs = append(diffs, policyv1.FieldDiff{Path: join(path, k), Actual: toJSON(o[k])})
			}
		}
	}
	return diffs
}

// compareList compares two lists, ignoring order. An item with a name is
// compared with the object's item of that name, field by field; any other
// item must match some item of the object (for mustonlyhave a distinct one,
// and the object may have no other items).
func compareList(path string, t, o []any, m mode) []policyv1.FieldDiff {
	var diffs []policyv1.FieldDiff
	used := make([]bool, len(o))
	for _, ti := range t {
		if name, ok := itemName(ti); ok {
			if j := findNamed(o, name); j >= 0 {
				used[j] = true
				diffs = append(diffs, compareValue(fmt.Sprintf("%s[name=%s]", path, name), ti, o[j], true, m)...)
				continue
			}
			diffs = append(diffs, policyv1.FieldDiff{Path: fmt.Sprintf("%s[name=%s]", path, name), Expected: toJSON(ti)})
			continue
		}
		found := false
		for j, oi := range o {
			if (m == mustOnlyHave && used[j]) || len(compareValue(path, ti, oi, true, m)) > 0 {
				continue
			}
			used[j], found = true, true
			break
		}
		if !found {
			diffs = append(diffs, policyv1.FieldDiff{Path: path + "[]", Expected: toJSON(ti)})
		}
	}
	if m == mustOnlyHave {
		for j, oi := range o {
			if !used[j] {
				diffs = append(diffs, policyv1.FieldDiff{Path: path + "[]", Actual: toJSON(oi)})
			}
		}
	}
	return diffs
}

// itemName returns the name of a list item that is a map with a string name.
func itemName(v any) (string, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return "", false
	}
	name, ok := m["name"].(string)
	return name, ok
}

// findNamed returns the index of the item named name, or -1.
func findNamed(items []any, name string) int {
	for j, it := range items {
		if n, ok := itemName(it); ok && n == name {
			return j
		}
	}
	return -1
}

// scalarEqual compares two scalars as OCM does: numbers by value, strings
// that are both quantities by quantity ("1Gi" equals "1024Mi"), and values
// of different types by their printed form (80 equals "80").
func scalarEqual(t, o any) bool {
	if tn, ok := number(t); ok {
		if on, ok := number(o); ok {
			return tn == on
		}
	}
	ts, tok := t.(string)
	os, ook := o.(string)
	if tok && ook {
		if ts == os {
			return true
		}
		tq, err1 := resource.ParseQuantity(ts)
		oq, err2 := resource.ParseQuantity(os)
		return err1 == nil && err2 == nil && tq.Cmp(oq) == 0
	}
	return fmt.Sprint(t) == fmt.Sprint(o)
}

// number returns v as a float64 when it is a number.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// isZero says whether v is nil or the zero value of its type.
func isZero(v any) bool {
	if v == nil {
		return true
	}
	return reflect.ValueOf(v).IsZero()
}

// diff records that the object's value o differs from the template's t.
func diff(path string, t, o any, present bool) policyv1.FieldDiff {
	d := policyv1.FieldDiff{Path: path, Expected: toJSON(t)}
	if present {
		d.Actual = toJSON(o)
	}
	return d
}

// toJSON is v as compact JSON.
func toJSON(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}

// plainKey matches keys that need no quoting in a path.
var plainKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// join appends key k to path p.
func join(p, k string) string {
	if !plainKey.MatchString(k) {
		return fmt.Sprintf("%s[%q]", p, k)
	}
	if p == "" {
		return k
	}
	return p + "." + k
}

// sortedKeys returns the keys of m in order, so that diffs are stable.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
