package workreplicaset

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// A change summary names at most this many manifests, and this many
// changed fields of each, and counts the rest.
const (
	summaryManifests = 3
	summaryFields    = 3
)

// changeSummary says in one line what changes from revision prev (nil:
// none, the first revision) to next: per manifest (Kind namespace/name)
// added, removed, or changed, a changed container image as `image a → b`,
// other changes by their first field paths; then the overrides, the
// replica division and the template's other fields, when they change.
func changeSummary(prev, next *workv1alpha1.RevisionData) string {
	if prev == nil {
		prev = &workv1alpha1.RevisionData{}
	}
	before, after := manifestsByID(prev), manifestsByID(next)
	var parts []string
	for _, id := range orderedIDs(prev, next) {
		a, inBefore := before[id]
		b, inAfter := after[id]
		switch {
		case !inBefore:
			parts = append(parts, id+" added")
		case !inAfter:
			parts = append(parts, id+" removed")
		case !reflect.DeepEqual(a, b):
			parts = append(parts, id+": "+objectChange(a, b))
		}
	}
	if len(parts) > summaryManifests {
		parts = append(parts[:summaryManifests], fmt.Sprintf("(+%d more)", len(parts)-summaryManifests))
	}
	pt, nt := prev.ManifestWorkTemplate, next.ManifestWorkTemplate
	pt.Workload, nt.Workload = workv1.ManifestsTemplate{}, workv1.ManifestsTemplate{}
	if !jsonEqual(pt, nt) {
		parts = append(parts, "manifestWorkTemplate "+strings.Join(changedPaths(asJSON(pt), asJSON(nt), ""), ", ")+" changed")
	}
	if !jsonEqual(prev.Overrides, next.Overrides) {
		parts = append(parts, "overrides changed")
	}
	if !jsonEqual(prev.ReplicaDivision, next.ReplicaDivision) {
		parts = append(parts, "replicaDivision changed")
	}
	if len(parts) == 0 {
		return "no change"
	}
	return strings.Join(parts, "; ")
}

// manifestsByID decodes the template's manifests by their Kind namespace/name.
func manifestsByID(d *workv1alpha1.RevisionData) map[string]map[string]any {
	out := map[string]map[string]any{}
	for i, m := range d.ManifestWorkTemplate.Workload.Manifests {
		var obj map[string]any
		if err := json.Unmarshal(m.Raw, &obj); err != nil {
			obj = map[string]any{"raw": string(m.Raw)}
		}
		out[manifestID(obj, i)] = obj
	}
	return out
}

// orderedIDs lists the manifests of next, then those only prev has, in
// their template order.
func orderedIDs(prev, next *workv1alpha1.RevisionData) []string {
	var ids []string
	seen := map[string]bool{}
	for _, d := range []*workv1alpha1.RevisionData{next, prev} {
		for i, m := range d.ManifestWorkTemplate.Workload.Manifests {
			var obj map[string]any
			if err := json.Unmarshal(m.Raw, &obj); err != nil {
				obj = map[string]any{"raw": string(m.Raw)}
			}
			if id := manifestID(obj, i); !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// manifestID is "Kind namespace/name" (or "Kind name"); a manifest
// without a kind and name is known by its index.
func manifestID(obj map[string]any, i int) string {
	kind, _ := obj["kind"].(string)
	md, _ := obj["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	ns, _ := md["namespace"].(string)
	if kind == "" || name == "" {
		return fmt.Sprintf("manifest %d", i)
	}
	if ns != "" {
		name = ns + "/" + name
	}
	return kind + " " + name
}

// objectChange says what changes in one manifest: its images, then its
// other changed fields.
func objectChange(a, b map[string]any) string {
	ia, ib := images(a, ""), images(b, "")
	var parts []string
	for _, path := range slices.Sorted(maps.Keys(ib)) {
		if old, ok := ia[path]; ok && old != ib[path] {
			parts = append(parts, fmt.Sprintf("image %s → %s", old, ib[path]))
		}
	}
	var fields []string
	for _, p := range changedPaths(a, b, "") {
		if _, image := ib[p]; image {
			if _, was := ia[p]; was {
				continue
			}
		}
		fields = append(fields, p)
	}
	if len(fields) > summaryFields {
		fields = append(fields[:summaryFields], fmt.Sprintf("(+%d more)", len(fields)-summaryFields))
	}
	if len(fields) > 0 {
		parts = append(parts, strings.Join(fields, ", "))
	}
	return strings.Join(parts, ", ")
}

// images maps the path of each container image field (under any
// containers or initContainers list) to the image.
func images(v any, path string) map[string]string {
	out := map[string]string{}
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			p := joinPath(path, k)
			if list, ok := child.([]any); ok && (k == "containers" || k == "initContainers") {
				for i, c := range list {
					if cm, ok := c.(map[string]any); ok {
						if img, ok := cm["image"].(string); ok {
							out[fmt.Sprintf("%s[%d].image", p, i)] = img
						}
					}
				}
				continue
			}
			maps.Copy(out, images(child, p))
		}
	case []any:
		for i, child := range v {
			maps.Copy(out, images(child, fmt.Sprintf("%s[%d]", path, i)))
		}
	}
	return out
}

// changedPaths lists the paths of the leaves that differ between a and b,
// sorted: a list whose length changed is one path.
func changedPaths(a, b any, path string) []string {
	if reflect.DeepEqual(a, b) {
		return nil
	}
	ma, okA := a.(map[string]any)
	mb, okB := b.(map[string]any)
	if okA && okB {
		keys := map[string]bool{}
		for k := range ma {
			keys[k] = true
		}
		for k := range mb {
			keys[k] = true
		}
		var out []string
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			out = append(out, changedPaths(ma[k], mb[k], joinPath(path, k))...)
		}
		return out
	}
	la, okA := a.([]any)
	lb, okB := b.([]any)
	if okA && okB && len(la) == len(lb) {
		var out []string
		for i := range la {
			out = append(out, changedPaths(la[i], lb[i], fmt.Sprintf("%s[%d]", path, i))...)
		}
		return out
	}
	if path == "" {
		return []string{"(all)"}
	}
	return []string{path}
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// asJSON is v as a decoded JSON document.
func asJSON(v any) any {
	raw, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return err.Error()
	}
	return doc
}

// jsonEqual compares a and b as JSON documents.
func jsonEqual(a, b any) bool { return reflect.DeepEqual(asJSON(a), asJSON(b)) }
