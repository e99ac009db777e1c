package engine

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
)

// mergeObject returns obj changed so that it complies with tmpl: what
// enforce writes. Like compareObject it leaves apiVersion, kind, status
// and metadata other than labels and annotations alone. musthave merges
// the template into the object (maps key by key, named list items field by
// field, missing list items appended); mustonlyhave replaces each of the
// template's fields with the template's value.
func mergeObject(tmpl, obj map[string]any, m, metaMode mode) map[string]any {
	out := runtime.DeepCopyJSON(obj)
	for k, tv := range tmpl {
		switch k {
		case "apiVersion", "kind", "status":
		case "metadata":
			tm, _ := tv.(map[string]any)
			om, _ := out[k].(map[string]any)
			if om == nil {
				om = map[string]any{}
				out[k] = om
			}
			for _, mk := range []string{"labels", "annotations"} {
				if v, ok := tm[mk]; ok {
					om[mk] = mergeValue(v, om[mk], metaMode)
					if mk == "annotations" && metaMode == mustOnlyHave {
						// Keep kubectl's own annotation, which comparisons ignore.
						oldMeta, _ := obj["metadata"].(map[string]any)
						oldAnnotations, _ := oldMeta["annotations"].(map[string]any)
						if la, ok := oldAnnotations[lastApplied]; ok {
							if a, ok := om[mk].(map[string]any); ok {
								a[lastApplied] = la
							}
						}
					}
				}
			}
		default:
			out[k] = mergeValue(tv, out[k], m)
		}
	}
	return out
}

// mergeValue returns the object's value o changed to comply with the
// template's value t. o belongs to the result and may be changed in place.
func mergeValue(t, o any, m mode) any {
	if m == mustOnlyHave {
		return runtime.DeepCopyJSONValue(t)
	}
	switch tv := t.(type) {
	case map[string]any:
		om, ok := o.(map[string]any)
		if !ok {
			return runtime.DeepCopyJSONValue(t)
		}
		for k, v := range tv {
			om[k] = mergeValue(v, om[k], m)
		}
		return om
	case []any:
		ol, ok := o.([]any)
		if !ok {
			return runtime.DeepCopyJSONValue(t)
		}
		for _, ti := range tv {
			if name, ok := itemName(ti); ok {
				if j := findNamed(ol, name); j >= 0 {
					ol[j] = mergeValue(ti, ol[j], m)
					continue
				}
				ol = append(ol, runtime.DeepCopyJSONValue(ti))
				continue
			}
			matched := false
			for _, oi := range ol {
				if len(compareValue("", ti, oi, true, m)) == 0 {
					matched = true
					break
				}
			}
			if !matched {
				ol = append(ol, runtime.DeepCopyJSONValue(ti))
			}
		}
		return ol
	default:
		if o != nil && scalarEqual(t, o) {
			// Keep the object's spelling ("1024Mi" for "1Gi"), so that
			// an equal value is not rewritten.
			return o
		}
		if o == nil && isZero(t) {
			return o
		}
		return runtime.DeepCopyJSONValue(t)
	}
}

// mergePatch is the JSON merge patch (RFC 7386) that turns original into
// modified: changed keys with their new value (maps recursively), removed
// keys as null. It is empty when they are equal.
func mergePatch(original, modified map[string]any) map[string]any {
	patch := map[string]any{}
	for k, mv := range modified {
		ov, ok := original[k]
		switch {
		case !ok:
			patch[k] = mv
		case equality.Semantic.DeepEqual(ov, mv):
		default:
			om, ok1 := ov.(map[string]any)
			mm, ok2 := mv.(map[string]any)
			if ok1 && ok2 {
				if sub := mergePatch(om, mm); len(sub) > 0 {
					patch[k] = sub
				}
				continue
			}
			patch[k] = mv
		}
	}
	for k := range original {
		if _, ok := modified[k]; !ok {
			patch[k] = nil
		}
	}
	return patch
}
