package health

import (
	"errors"
	"strings"
	"testing"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		hc   *workv1alpha1.HealthCheck
		// want maps each field refused to words of its message.
		want map[string]string
	}{
		{name: "none", hc: nil},
		{name: "feedback and expression", hc: &workv1alpha1.HealthCheck{Feedback: capacity, Expression: "values.AvailableReplicas == values.Replicas",
			Target: &workv1alpha1.ManifestSelector{Kind: "Deployment"}}},
		{name: "a literal", hc: &workv1alpha1.HealthCheck{Feedback: []workv1alpha1.FeedbackCheck{{Name: "PodPhase", Equals: "Running"}}}},
		{name: "checks nothing", hc: &workv1alpha1.HealthCheck{Target: &workv1alpha1.ManifestSelector{Kind: "Deployment"}},
			want: map[string]string{"spec.healthCheck": "checks nothing"}},
		{name: "neither equalsValue nor equals", hc: &workv1alpha1.HealthCheck{Feedback: []workv1alpha1.FeedbackCheck{{Name: "Replicas"}}},
			want: map[string]string{"spec.healthCheck.feedback[0]": "set one of equalsValue"}},
		{name: "both equalsValue and equals", hc: &workv1alpha1.HealthCheck{Feedback: []workv1alpha1.FeedbackCheck{{Name: "Replicas", Equals: "3"}, {Name: "Replicas", EqualsValue: "x", Equals: "3"}}},
			want: map[string]string{"spec.healthCheck.feedback[1]": "only one"}},
		{name: "no name", hc: &workv1alpha1.HealthCheck{Feedback: []workv1alpha1.FeedbackCheck{{Equals: "3"}}},
			want: map[string]string{"spec.healthCheck.feedback[0].name": "name the status feedback value"}},
		{name: "a value equal to itself", hc: &workv1alpha1.HealthCheck{Feedback: []workv1alpha1.FeedbackCheck{{Name: "Replicas", EqualsValue: "Replicas"}}},
			want: map[string]string{"spec.healthCheck.feedback[0].equalsValue": "always equals itself"}},
		{name: "does not compile", hc: &workv1alpha1.HealthCheck{Expression: "values.Replicas == "},
			want: map[string]string{"spec.healthCheck.expression": "does not compile: ERROR"}},
		{name: "an undeclared variable", hc: &workv1alpha1.HealthCheck{Expression: "object.status.replicas == 3"},
			want: map[string]string{"spec.healthCheck.expression": "undeclared reference to 'object'"}},
		{name: "not a bool", hc: &workv1alpha1.HealthCheck{Expression: `manifest.name + "x"`},
			want: map[string]string{"spec.healthCheck.expression": "yields string, not bool"}},
		{name: "too long", hc: &workv1alpha1.HealthCheck{Expression: strings.Repeat("true && ", 600) + "true"},
			want: map[string]string{"spec.healthCheck.expression": "over the limit of 4096"}},
		{name: "several problems at once", hc: &workv1alpha1.HealthCheck{Feedback: []workv1alpha1.FeedbackCheck{{Name: "a"}}, Expression: "1"},
			want: map[string]string{"spec.healthCheck.feedback[0]": "set one of", "spec.healthCheck.expression": "yields int"}},
	}
	c := NewChecker()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := c.Validate(tt.hc)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var agg utilerrors.Aggregate
			if !errors.As(err, &agg) {
				t.Fatalf("Validate() = %v (%T), want an aggregate of field errors", err, err)
			}
			got := map[string]string{}
			for _, e := range agg.Errors() {
				var fe *field.Error
				if !errors.As(e, &fe) {
					t.Fatalf("%v (%T) is not a *field.Error", e, e)
				}
				got[fe.Field] = fe.Error()
			}
			if len(got) != len(tt.want) {
				t.Errorf("Validate() refused %v, want the fields %v", got, tt.want)
			}
			for f, words := range tt.want {
				if !strings.Contains(got[f], words) {
					t.Errorf("field %s: %q does not say %q", f, got[f], words)
				}
			}
		})
	}
}
