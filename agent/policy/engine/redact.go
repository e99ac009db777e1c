package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flotilla-io/flotilla/internal/policytemplate"
)

// WholeInResults says where the whole text of a message cut to
// policytemplate.MessageLimit is: object by object, in the structured
// results (docs/policy-results.md).
const WholeInResults = "see status.details[].results"

// secretReader records the data of every Secret that an evaluation reads
// (through fromSecret, lookup, .Object or a template of kind Secret), so
// that the result's messages can be redacted.
type secretReader struct {
	Reader
	secrets *policytemplate.Secrets
}

func (s *secretReader) Get(ctx context.Context, m *meta.RESTMapping, ns, name string) (*unstructured.Unstructured, error) {
	obj, err := s.Reader.Get(ctx, m, ns, name)
	if obj != nil && isSecret(m) {
		s.record(obj)
	}
	return obj, err
}

func (s *secretReader) List(ctx context.Context, m *meta.RESTMapping, ns string, sel labels.Selector) ([]*unstructured.Unstructured, error) {
	objs, err := s.Reader.List(ctx, m, ns, sel)
	if isSecret(m) {
		for _, o := range objs {
			s.record(o)
		}
	}
	return objs, err
}

func (s *secretReader) record(obj *unstructured.Unstructured) {
	data, _, _ := unstructured.NestedMap(obj.Object, "data")
	for _, v := range data {
		if v, ok := v.(string); ok {
			s.secrets.AddEncoded(v)
		}
	}
	stringData, _, _ := unstructured.NestedMap(obj.Object, "stringData")
	for _, v := range stringData {
		if v, ok := v.(string); ok {
			s.secrets.Add([]byte(v))
		}
	}
}

func isSecret(m *meta.RESTMapping) bool {
	return m != nil && m.GroupVersionKind.Group == "" && m.GroupVersionKind.Kind == "Secret"
}

// valued are the kinds of field errors whose message quotes the value.
var valued = map[field.ErrorType]bool{
	field.ErrorTypeInvalid: true, field.ErrorTypeTypeInvalid: true, field.ErrorTypeNotSupported: true,
	field.ErrorTypeNotFound: true, field.ErrorTypeDuplicate: true, field.ErrorTypeTooMany: true, field.ErrorTypeTooFew: true,
}

// errorText is how an error of the API server reads in a message. For an
// object whose template read a Secret (sensitive), an object the API
// server refused as invalid is named with the field paths and what is
// wrong with each, never with the values its message quotes (the API
// server quotes a whole pod template when it is immutable).
func errorText(err error, sensitive bool) string {
	var st apierrors.APIStatus
	if !sensitive || !errors.As(err, &st) {
		return err.Error()
	}
	s := st.Status()
	if s.Reason != metav1.StatusReasonInvalid || s.Details == nil || len(s.Details.Causes) == 0 {
		return s.Message
	}
	kind := s.Details.Kind
	if s.Details.Group != "" {
		kind += "." + s.Details.Group
	}
	causes := make([]string, 0, len(s.Details.Causes))
	for _, c := range s.Details.Causes {
		t := field.ErrorType(c.Type)
		what := c.Message
		if valued[t] {
			what = t.String()
			if strings.HasSuffix(c.Message, ": "+apivalidation.FieldImmutableErrorMsg) {
				what += ": " + apivalidation.FieldImmutableErrorMsg
			}
		}
		if c.Field != "" {
			what = c.Field + ": " + what
		}
		causes = append(causes, what)
	}
	return fmt.Sprintf("%s %q is invalid: %s (values withheld: the template read a Secret)", kind, s.Details.Name, strings.Join(causes, ", "))
}
