package work

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// MaxManifestsSize is the most JSON, in bytes, that the manifests of one
// ManifestWork may hold together (OCM's limit): the agent keeps each work,
// and etcd each object, whole.
const MaxManifestsSize = 500 * 1024

// Problem is one reason why a ManifestWork's manifests are refused.
type Problem struct {
	// Index is the manifest at fault in spec.workload.manifests; for a
	// work that is too large, the largest manifest.
	Index int
	// Object describes that manifest as far as it names itself, e.g.
	// "ConfigMap default/app" or "ConfigMap in namespace default".
	Object string
	// Field is the missing field ("apiVersion", "kind", "metadata.name"),
	// or "" when the manifest is not a JSON object or the manifests are too
	// large.
	Field string
	// Total is the size of all manifests (too large only).
	Total int
	// Size is the size of manifest Index (too large only).
	Size int
}

// TooLarge reports whether the problem is the size of the manifests.
func (p Problem) TooLarge() bool { return p.Total > 0 }

// Describe says what is wrong and how to fix it; where names a manifest by
// its index, e.g. "spec.workload.manifests[1]" or "document 2 of app.yaml".
func (p Problem) Describe(where func(index int) string) string {
	if p.TooLarge() {
		return fmt.Sprintf("the manifests total %d bytes of JSON, over the limit of %d bytes (500 KiB); the largest is %s (%s, %d bytes): split the manifests over several ManifestWorks",
			p.Total, MaxManifestsSize, where(p.Index), p.Object, p.Size)
	}
	what := where(p.Index)
	if p.Object != "" {
		what += " (" + p.Object + ")"
	}
	switch p.Field {
	case "":
		return what + " is not a JSON object: every manifest must be a complete Kubernetes object"
	case "metadata.name":
		return what + " has no metadata.name: every manifest must name the object it applies (generateName is not supported)"
	default:
		return fmt.Sprintf("%s has no %s: every manifest must be a complete Kubernetes object with apiVersion, kind and metadata.name", what, p.Field)
	}
}

// SpecPath names manifest i by its path in the ManifestWork, for Describe.
func SpecPath(i int) string { return fmt.Sprintf("spec.workload.manifests[%d]", i) }

// manifestHead is the part of a manifest that names its object.
type manifestHead struct {
	APIVersion *string `json:"apiVersion"`
	Kind       *string `json:"kind"`
	Metadata   *struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

// Validate checks manifests as the hub's admission does: each must be a
// JSON object with apiVersion, kind and metadata.name, and together their
// compact JSON must not exceed MaxManifestsSize. It returns every problem
// found, in manifest order, the size last; none means valid.
func Validate(manifests []workv1.Manifest) []Problem {
	var (
		problems []Problem
		total    int
		largest  = Problem{Index: -1}
	)
	for i, m := range manifests {
		size := compactSize(m.Raw)
		total += size
		var head manifestHead
		if !isObject(m.Raw) || json.Unmarshal(m.Raw, &head) != nil {
			problems = append(problems, Problem{Index: i})
			if size > largest.Size || largest.Index < 0 {
				largest = Problem{Index: i, Size: size}
			}
			continue
		}
		object := describe(head)
		if size > largest.Size || largest.Index < 0 {
			largest = Problem{Index: i, Object: object, Size: size}
		}
		if head.APIVersion == nil || *head.APIVersion == "" {
			problems = append(problems, Problem{Index: i, Object: object, Field: "apiVersion"})
		}
		if head.Kind == nil || *head.Kind == "" {
			problems = append(problems, Problem{Index: i, Object: object, Field: "kind"})
		}
		if head.Metadata == nil || head.Metadata.Name == "" {
			problems = append(problems, Problem{Index: i, Object: object, Field: "metadata.name"})
		}
	}
	if total > MaxManifestsSize {
		largest.Total = total
		problems = append(problems, largest)
	}
	return problems
}

// Describe joins the descriptions of problems into one message.
func Describe(problems []Problem, where func(index int) string) string {
	msgs := make([]string, len(problems))
	for i, p := range problems {
		msgs[i] = p.Describe(where)
	}
	return strings.Join(msgs, "; ")
}

// describe names a manifest's object as far as the manifest says.
func describe(h manifestHead) string {
	var kind, name, ns string
	if h.Kind != nil {
		kind = *h.Kind
	}
	if h.Metadata != nil {
		name, ns = h.Metadata.Name, h.Metadata.Namespace
	}
	var parts []string
	if kind != "" {
		parts = append(parts, kind)
	}
	switch {
	case name != "" && ns != "":
		parts = append(parts, ns+"/"+name)
	case name != "":
		parts = append(parts, name)
	case ns != "":
		parts = append(parts, "in namespace "+ns)
	}
	return strings.Join(parts, " ")
}

// compactSize is the length of raw as compact JSON, so that the limit does
// not depend on how a client indented its manifests.
func compactSize(raw []byte) int {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return len(raw)
	}
	return buf.Len()
}

// isObject reports whether raw holds a JSON object (or is meant to).
func isObject(raw []byte) bool {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	return len(raw) > 0 && raw[0] == '{'
}
