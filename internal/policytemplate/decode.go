package policytemplate

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sigsjson "sigs.k8s.io/json"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

// Template is one entry of a Policy's policy-templates, decoded strictly.
type Template struct {
	// Index is the entry's index in spec.policy-templates.
	Index int
	// Name, Kind and APIVersion identify the template object.
	Name, Kind, APIVersion string
	// ConfigurationPolicy is the template as written (the Policy's
	// remediationAction not yet applied); nil when Err is set.
	ConfigurationPolicy *policyv1.ConfigurationPolicy
	// Err says why the template cannot be evaluated, in the words every
	// reader of it reports.
	Err error
	// HubTemplateError says that Err is the hub's: its hub templates did
	// not resolve.
	HubTemplateError bool
}

// DisplayName is the name status.details[].templateMeta records: the
// template's, or OCM's template-<index> for a template without one.
func (t Template) DisplayName() string {
	if t.Name != "" {
		return t.Name
	}
	return fmt.Sprintf("template-%d", t.Index)
}

// Decode decodes and validates every policy template of p; names must be
// unique within the policy. A template in error leaves the others as they
// are.
func Decode(p *policyv1.Policy) []Template {
	out := make([]Template, 0, len(p.Spec.PolicyTemplates))
	seen := map[string]bool{}
	for i, pt := range p.Spec.PolicyTemplates {
		t := DecodeTemplate(i, pt.ObjectDefinition.Raw)
		if t.Err == nil && seen[t.Name] {
			t.Err, t.ConfigurationPolicy = fmt.Errorf("the policy template at index %d is named %s, as one before it: template names must be unique", i, t.Name), nil
		}
		if t.Err == nil {
			seen[t.Name] = true
		}
		out = append(out, t)
	}
	return out
}

// DecodeTemplate decodes the policy template at index i of a Policy:
// strictly, so that an unknown or misplaced field is an error naming its
// path and the fields valid there, as the API server's strict field
// validation would reject it.
func DecodeTemplate(i int, raw []byte) Template {
	t := Template{Index: i}
	var head struct {
		metav1.TypeMeta `json:",inline"`
		Metadata        struct {
			Name        string            `json:"name"`
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(raw, &head); err != nil {
		t.Err = fmt.Errorf("Failed to decode policy template with err: %s", describe(err, reflect.TypeOf(head)))
		return t
	}
	t.Name, t.Kind, t.APIVersion = head.Metadata.Name, head.Kind, head.APIVersion
	hubErr, hasHubErr := head.Metadata.Annotations[HubTemplatesErrorAnnotation]
	switch {
	case t.Kind == "" || t.APIVersion == "":
		t.Err = fmt.Errorf("Failed to decode policy template with err: Object 'Kind' is missing in the policy template at index %d: "+
			"set kind: %s and apiVersion: %s", i, policyv1.ConfigurationPolicyKind, policyv1.GroupVersion)
	case t.Name == "":
		t.Err = fmt.Errorf("Failed to parse or get name from policy template at index %d", i)
	case hasHubErr:
		t.Err, t.HubTemplateError = errors.New(hubErr), true
		if hubErr == "" {
			t.Err = errors.New("the hub could not resolve the hub templates of this policy template; its events say why")
		}
	case t.Kind != policyv1.ConfigurationPolicyKind || t.APIVersion != policyv1.GroupVersion.String():
		t.Err = fmt.Errorf("policy templates of kind %s (%s) are not supported: Flotilla evaluates %s %s only",
			t.Kind, t.APIVersion, policyv1.GroupVersion.String(), policyv1.ConfigurationPolicyKind)
	default:
		cp := &policyv1.ConfigurationPolicy{}
		if err := strict(raw, cp); err != nil {
			t.Err = fmt.Errorf("Failed to create policy template: ConfigurationPolicy %s at index %d: %w", t.Name, i, err)
			break
		}
		if err := Validate(&cp.Spec); err != nil {
			t.Err = fmt.Errorf("Failed to create policy template: ConfigurationPolicy %s at index %d: %w", t.Name, i, err)
			break
		}
		t.ConfigurationPolicy = cp
	}
	return t
}

// strict decodes data into v, failing on unknown and duplicate fields and
// on values of the wrong type, each named by its path.
func strict(data []byte, v any) error {
	strictErrs, err := sigsjson.UnmarshalStrict(data, v, sigsjson.DisallowUnknownFields)
	if err != nil {
		return errors.New(describe(err, reflect.TypeOf(v)))
	}
	if len(strictErrs) == 0 {
		return nil
	}
	msgs := make([]string, 0, len(strictErrs))
	for _, e := range strictErrs {
		msgs = append(msgs, describe(e, reflect.TypeOf(v)))
	}
	return errors.New("strict decoding error: " + strings.Join(msgs, ", "))
}

var unknownField = regexp.MustCompile(`^unknown field "(.*)"$`)

// describe words a decoding error for people: an unknown field with the
// fields valid where it is, a value of the wrong type with the type wanted.
func describe(err error, root reflect.Type) string {
	if m := unknownField.FindStringSubmatch(err.Error()); m != nil {
		path := m[1]
		parent := path[:max(0, strings.LastIndex(path, "."))]
		if fields := fieldsAt(root, parent); len(fields) > 0 {
			where := parent
			if where == "" {
				where = "the top level"
			}
			return fmt.Sprintf("unknown field %q (valid fields at %s: %s)", path, where, strings.Join(fields, ", "))
		}
		return err.Error()
	}
	if m := typeMismatch.FindStringSubmatch(err.Error()); m != nil {
		return fmt.Sprintf("%s: Invalid value: %s, want %s", m[2], article(m[1]), goTypeWords(m[3]))
	}
	return err.Error()
}

// typeMismatch is encoding/json's error for a value of the wrong type.
var typeMismatch = regexp.MustCompile(`cannot unmarshal (\w+) into Go struct field [^.\s]+\.(\S+) of type (\S+)`)

// article words a JSON value kind: "an object", "a string".
func article(kind string) string {
	switch kind {
	case "object", "array":
		if kind == "array" {
			return "a list"
		}
		return "an object"
	case "number", "string", "bool":
		if kind == "bool" {
			return "a boolean"
		}
		return "a " + kind
	}
	return kind
}

// goTypeWords words a Go type for people: "a list", "an object", "a string".
func goTypeWords(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map["), strings.HasPrefix(t, "v1."), strings.HasPrefix(t, "*v1."):
		if strings.HasSuffix(t, "Type") || strings.HasSuffix(t, "Action") || strings.HasSuffix(t, "Option") ||
			strings.HasSuffix(t, "Severity") || strings.HasSuffix(t, "Behavior") || strings.HasSuffix(t, "String") || strings.HasSuffix(t, "Diff") {
			return "a string"
		}
		return "an object"
	case t == "string":
		return "a string"
	case t == "bool":
		return "a boolean"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "float"):
		return "a number"
	}
	return t
}

// fieldsAt lists the JSON fields of the struct at path below root ("" for
// root itself), following list items and pointers; none when path leads to
// no struct.
func fieldsAt(root reflect.Type, path string) []string {
	t := deref(root)
	if path != "" {
		for _, part := range strings.Split(path, ".") {
			part = strings.TrimSuffix(part, "]")
			if i := strings.Index(part, "["); i >= 0 {
				part = part[:i]
			}
			f, ok := field(t, part)
			if !ok {
				return nil
			}
			t = deref(f)
		}
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var out []string
	collect(t, &out)
	sort.Strings(out)
	return out
}

// deref follows pointers, slices and maps to their element type.
func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	return t
}

// field finds the field with JSON name name in struct t, inline ones included.
func field(t reflect.Type, name string) (reflect.Type, bool) {
	if t.Kind() != reflect.Struct {
		return nil, false
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case tag == "-":
		case tag == "" && f.Anonymous:
			if ft, ok := field(deref(f.Type), name); ok {
				return ft, true
			}
		case tag == name:
			return f.Type, true
		}
	}
	return nil, false
}

// collect appends the JSON names of t's fields, inline ones included.
func collect(t reflect.Type, out *[]string) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case tag == "-" || !f.IsExported():
		case tag == "" && f.Anonymous:
			collect(deref(f.Type), out)
		case tag != "":
			*out = append(*out, tag)
		}
	}
}

// DecodePolicy decodes a Policy read as a map (from YAML or JSON)
// strictly: an unknown or misplaced field of the Policy is an error that
// names its path. Its policy templates are decoded by Decode.
func DecodePolicy(obj map[string]any, into *policyv1.Policy) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	return strict(data, into)
}
