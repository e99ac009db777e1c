package policytemplate

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

// Validate checks what a ConfigurationPolicy's schema allows beyond its
// field names and types: the values of its enumerations, and that every
// object template has an objectDefinition. Each problem names its field.
func Validate(s *policyv1.ConfigurationPolicySpec) error {
	var errs []error
	switch strings.ToLower(string(s.RemediationAction)) {
	case "", "inform", "enforce":
	default:
		errs = append(errs, fmt.Errorf("spec.remediationAction: Unsupported value: %q: supported values: \"inform\", \"enforce\"", s.RemediationAction))
	}
	if len(s.ObjectTemplates) > 0 && s.ObjectTemplatesRaw != "" {
		errs = append(errs, errors.New("spec: exactly one of object-templates and object-templates-raw must be set"))
	}
	for i := range s.ObjectTemplates {
		if err := ValidateObjectTemplate(&s.ObjectTemplates[i], fmt.Sprintf("spec.object-templates[%d]", i)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// ValidateObjectTemplate checks one object template; path names it in errors.
func ValidateObjectTemplate(ot *policyv1.ObjectTemplate, path string) error {
	var errs []error
	if !oneOf(ot.ComplianceType, policyv1.MustHave, policyv1.MustOnlyHave, policyv1.MustNotHave) {
		errs = append(errs, UnsupportedComplianceType(path+".complianceType", ot.ComplianceType, policyv1.MustHave, policyv1.MustOnlyHave, policyv1.MustNotHave))
	}
	if ot.MetadataComplianceType != "" && !oneOf(ot.MetadataComplianceType, policyv1.MustHave, policyv1.MustOnlyHave) {
		errs = append(errs, UnsupportedComplianceType(path+".metadataComplianceType", ot.MetadataComplianceType, policyv1.MustHave, policyv1.MustOnlyHave))
	}
	if len(ot.ObjectDefinition.Raw) == 0 || string(ot.ObjectDefinition.Raw) == "null" {
		errs = append(errs, fmt.Errorf("%s.objectDefinition: Required value: the object to check, with apiVersion and kind", path))
	} else {
		var def any
		if err := json.Unmarshal(ot.ObjectDefinition.Raw, &def); err == nil && reflect.TypeOf(def) != reflect.TypeOf(map[string]any{}) {
			errs = append(errs, fmt.Errorf("%s.objectDefinition: Invalid value: must be an object (a Kubernetes object with apiVersion and kind)", path))
		}
	}
	return errors.Join(errs...)
}

// UnsupportedComplianceType is the error of a complianceType outside
// valid, in the API server's words.
func UnsupportedComplianceType(path string, got policyv1.ComplianceType, valid ...policyv1.ComplianceType) error {
	quoted := make([]string, 0, len(valid))
	for _, v := range valid {
		quoted = append(quoted, fmt.Sprintf("%q", strings.ToLower(string(v))))
	}
	return fmt.Errorf("%s: Unsupported value: %q: supported values: %s", path, got, strings.Join(quoted, ", "))
}

func oneOf(c policyv1.ComplianceType, types ...policyv1.ComplianceType) bool {
	for _, v := range types {
		if c.Is(v) {
			return true
		}
	}
	return false
}
