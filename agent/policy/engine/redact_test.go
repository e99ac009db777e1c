package engine

import (
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestErrorText(t *testing.T) {
	invalid := apierrors.NewInvalid(schema.GroupKind{Group: "batch", Kind: "Job"}, "sec-job", field.ErrorList{
		field.Invalid(field.NewPath("spec", "template"), map[string]string{"KEY": "s3cr3t"}, "field is immutable"),
		field.Invalid(field.NewPath("metadata", "labels"), "s3cr3t!", "a valid label must be ..."),
		field.Forbidden(field.NewPath("spec", "selector"), "may not be changed"),
	})
	for _, tt := range []struct {
		name      string
		err       error
		sensitive bool
		want      string
	}{
		{"not sensitive: the API server's words", invalid, false, invalid.Error()},
		{"sensitive invalid: paths and types", invalid, true,
			`Job.batch "sec-job" is invalid: spec.template: Invalid value: field is immutable, metadata.labels: Invalid value, ` +
				`spec.selector: Forbidden: may not be changed (values withheld: the template read a Secret)`},
		{"sensitive, another status: its message", apierrors.NewForbidden(schema.GroupResource{Resource: "jobs"}, "j", errors.New("no")), true,
			`jobs "j" is forbidden: no`},
		{"sensitive, not from the API server", errors.New("connection refused"), true, "connection refused"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := errorText(tt.err, tt.sensitive)
			if got != tt.want {
				t.Errorf("errorText = %q, want %q", got, tt.want)
			}
			if tt.sensitive && strings.Contains(got, "s3cr3t") {
				t.Errorf("errorText kept a value: %q", got)
			}
		})
	}
}
