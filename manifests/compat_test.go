package manifests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// referenceDirs hold the published OCM CRDs, beside the repository. A CRD
// in a later directory supersedes one of the same name in an earlier one
// (ocm-crds-next holds the add-on kinds of OCM v1.3, served in two versions,
// and ClusterManager). sig-multicluster holds the SIG-Multicluster kinds:
// ClusterProfile, the neutral PlacementDecision and ClusterProperty.
var referenceDirs = []string{"ocm-crds", "ocm-crds-next", "sig-multicluster"}

// referenceRoot finds shared/reference in a directory above this package:
// beside the repository, or beside the directory of a worktree.
func referenceRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for {
		candidate := filepath.Join(filepath.Dir(dir), "shared", "reference")
		if st, err := os.Stat(candidate); err == nil && st.IsDir() {
			return candidate
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no shared/reference beside the repository or any directory above it")
		}
		dir = parent
	}
}

// notServed are reference CRDs outside the contract's table of kinds.
var notServed = map[string]string{}

// deviations are the places where our schema knowingly differs from the
// reference, keyed "<crd>:<path>:<what>", each with its reason. Every entry
// must still occur: a deviation that was fixed is removed from this list.
var deviations = map[string]string{
	"policies.policy.open-cluster-management.io:v1:preserveUnknownFields":                                             unknownPolicyFields,
	"policies.policy.open-cluster-management.io:v1.spec:preserveUnknownFields":                                        unknownPolicyFields,
	"policies.policy.open-cluster-management.io:v1.spec.dependencies[]:preserveUnknownFields":                         unknownPolicyFields,
	"policies.policy.open-cluster-management.io:v1.spec.hubTemplateOptions:preserveUnknownFields":                     unknownPolicyFields,
	"policies.policy.open-cluster-management.io:v1.spec.policy-templates[]:preserveUnknownFields":                     unknownPolicyFields,
	"policies.policy.open-cluster-management.io:v1.spec.policy-templates[].extraDependencies[]:preserveUnknownFields": unknownPolicyFields,
}

// unknownPolicyFields is why a Policy keeps unknown fields: the API server
// prunes them while decoding, before any webhook sees them, so only a
// schema that keeps them lets the hub's Policy webhook refuse a typo by
// name (docs/policy-templates.md) instead of storing the Policy without it.
const unknownPolicyFields = "kept so that the Policy webhook refuses unknown fields by name"

// TestSchemasMatchReference walks every property path of each reference
// schema and fails when ours lacks it or describes it differently.
func TestSchemasMatchReference(t *testing.T) {
	refs := readReference(t)
	ours, err := AllCRDs()
	if err != nil {
		t.Fatal(err)
	}
	spokeOwner, err := SpokeOwnerCRDs()
	if err != nil {
		t.Fatal(err)
	}
	ours = append(ours, spokeOwner...)
	byName := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, crd := range ours {
		byName[crd.Name] = crd
	}

	seen := map[string]bool{}
	for _, ref := range refs {
		if _, skip := notServed[ref.Name]; skip {
			continue
		}
		crd, ok := byName[ref.Name]
		if !ok {
			t.Errorf("%s: no generated CRD of that name", ref.Name)
			continue
		}
		for _, diff := range compareCRD(ref, crd) {
			key := ref.Name + ":" + diff.key
			seen[key] = true
			if _, ok := deviations[key]; ok {
				continue
			}
			t.Errorf("%s: %s", ref.Name, diff.msg)
		}
	}
	for key := range deviations {
		if !seen[key] {
			t.Errorf("deviation %q no longer occurs: remove it from the list", key)
		}
	}
}

type difference struct{ key, msg string }

func compareCRD(ref, ours *apiextensionsv1.CustomResourceDefinition) []difference {
	var diffs []difference
	add := func(key, format string, args ...any) {
		diffs = append(diffs, difference{key: key, msg: key + ": " + fmt.Sprintf(format, args...)})
	}
	if ref.Spec.Scope != ours.Spec.Scope {
		add("scope", "reference %s, ours %s", ref.Spec.Scope, ours.Spec.Scope)
	}
	rn, on := ref.Spec.Names, ours.Spec.Names
	if rn.Kind != on.Kind || rn.ListKind != on.ListKind || rn.Plural != on.Plural || rn.Singular != on.Singular {
		add("names", "reference %+v, ours %+v", rn, on)
	}
	if !sameStrings(rn.ShortNames, on.ShortNames) {
		add("shortNames", "reference %v, ours %v", rn.ShortNames, on.ShortNames)
	}
	if !sameStrings(rn.Categories, on.Categories) {
		add("categories", "reference %v, ours %v", rn.Categories, on.Categories)
	}
	for _, rv := range ref.Spec.Versions {
		ov := findVersion(ours, rv.Name)
		if ov == nil {
			add(rv.Name, "version not served")
			continue
		}
		if rv.Served != ov.Served || rv.Storage != ov.Storage {
			add(rv.Name+":served", "reference served=%t storage=%t, ours served=%t storage=%t", rv.Served, rv.Storage, ov.Served, ov.Storage)
		}
		if rv.Deprecated != ov.Deprecated {
			add(rv.Name+":deprecated", "reference %t, ours %t", rv.Deprecated, ov.Deprecated)
		}
		if !reflect.DeepEqual(subresources(rv.Subresources), subresources(ov.Subresources)) {
			add(rv.Name+":subresources", "reference %v, ours %v", subresources(rv.Subresources), subresources(ov.Subresources))
		}
		if r, o := columns(rv.AdditionalPrinterColumns), columns(ov.AdditionalPrinterColumns); !reflect.DeepEqual(r, o) {
			add(rv.Name+":columns", "printer columns: reference %v, ours %v", r, o)
		}
		walk(rv.Name, rv.Schema.OpenAPIV3Schema, ov.Schema.OpenAPIV3Schema, add)
	}
	return diffs
}

// walk compares one schema node and recurses into everything the reference
// declares below it. Properties that only we have are extensions and pass.
func walk(path string, ref, ours *apiextensionsv1.JSONSchemaProps, add func(key, format string, args ...any)) {
	if ref == nil {
		return
	}
	if ours == nil {
		add(path, "missing")
		return
	}
	if ref.Type != ours.Type {
		add(path+":type", "type: reference %q, ours %q", ref.Type, ours.Type)
	}
	if ref.Format != ours.Format {
		add(path+":format", "format: reference %q, ours %q", ref.Format, ours.Format)
	}
	if r, o := rawSet(ref.Enum), rawSet(ours.Enum); !reflect.DeepEqual(r, o) {
		add(path+":enum", "enum: reference %v, ours %v", r, o)
	}
	if r, o := raw(ref.Default), raw(ours.Default); r != o {
		add(path+":default", "default: reference %s, ours %s", r, o)
	}
	if !sameStrings(ref.Required, ours.Required) {
		add(path+":required", "required: reference %v, ours %v", ref.Required, ours.Required)
	}
	if flag(ref.XPreserveUnknownFields) != flag(ours.XPreserveUnknownFields) {
		add(path+":preserveUnknownFields", "x-kubernetes-preserve-unknown-fields: reference %t, ours %t", flag(ref.XPreserveUnknownFields), flag(ours.XPreserveUnknownFields))
	}
	if ref.XIntOrString != ours.XIntOrString {
		add(path+":intOrString", "x-kubernetes-int-or-string: reference %t, ours %t", ref.XIntOrString, ours.XIntOrString)
	}
	if ref.XEmbeddedResource != ours.XEmbeddedResource {
		add(path+":embeddedResource", "x-kubernetes-embedded-resource: reference %t, ours %t", ref.XEmbeddedResource, ours.XEmbeddedResource)
	}
	names := make([]string, 0, len(ref.Properties))
	for name := range ref.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		r := ref.Properties[name]
		o, ok := ours.Properties[name]
		if !ok {
			add(path+"."+name, "missing")
			continue
		}
		walk(path+"."+name, &r, &o, add)
	}
	if ref.Items != nil && ref.Items.Schema != nil {
		var o *apiextensionsv1.JSONSchemaProps
		if ours.Items != nil {
			o = ours.Items.Schema
		}
		walk(path+"[]", ref.Items.Schema, o, add)
	}
	if ref.AdditionalProperties != nil && ref.AdditionalProperties.Schema != nil {
		var o *apiextensionsv1.JSONSchemaProps
		if ours.AdditionalProperties != nil {
			o = ours.AdditionalProperties.Schema
		}
		walk(path+"{}", ref.AdditionalProperties.Schema, o, add)
	}
}

func readReference(t *testing.T) []*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	byName := map[string]*apiextensionsv1.CustomResourceDefinition{}
	root := referenceRoot(t)
	for _, name := range referenceDirs {
		dir := filepath.Join(root, name)
		paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil || len(paths) == 0 {
			t.Fatalf("no reference CRDs under %s (shared/ must sit beside the repository): %v", dir, err)
		}
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := yaml.Unmarshal(data, crd); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			byName[crd.Name] = crd
		}
	}
	crds := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(byName))
	for _, crd := range byName {
		crds = append(crds, crd)
	}
	sort.Slice(crds, func(i, j int) bool { return crds[i].Name < crds[j].Name })
	return crds
}

func findVersion(crd *apiextensionsv1.CustomResourceDefinition, name string) *apiextensionsv1.CustomResourceDefinitionVersion {
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Name == name {
			return &crd.Spec.Versions[i]
		}
	}
	return nil
}

func subresources(s *apiextensionsv1.CustomResourceSubresources) []string {
	var out []string
	if s != nil && s.Status != nil {
		out = append(out, "status")
	}
	if s != nil && s.Scale != nil {
		out = append(out, "scale")
	}
	return out
}

func columns(cols []apiextensionsv1.CustomResourceColumnDefinition) []string {
	out := make([]string, 0, len(cols))
	for _, c := range cols {
		out = append(out, strings.Join([]string{c.Name, c.Type, c.JSONPath, fmt.Sprint(c.Priority)}, " "))
	}
	return out
}

func rawSet(values []apiextensionsv1.JSON) []string {
	out := make([]string, 0, len(values))
	for _, v := range values {
		out = append(out, canonical(v.Raw))
	}
	sort.Strings(out)
	return out
}

func raw(v *apiextensionsv1.JSON) string {
	if v == nil {
		return "<none>"
	}
	return canonical(v.Raw)
}

// canonical re-encodes JSON so that formatting differences do not count.
func canonical(data []byte) string {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return string(data)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

func flag(b *bool) bool { return b != nil && *b }

func sameStrings(a, b []string) bool {
	a, b = append([]string(nil), a...), append([]string(nil), b...)
	sort.Strings(a)
	sort.Strings(b)
	return reflect.DeepEqual(a, b)
}
