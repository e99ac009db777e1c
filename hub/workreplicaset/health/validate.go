package health

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// Path is where a replica set holds its health check.
var Path = field.NewPath("spec", "healthCheck")

// Validate says what is wrong with hc, nil when nothing is: an
// utilerrors.Aggregate of *field.Error, each naming its field under
// spec.healthCheck, for the hub's admission to refuse the replica set with.
// A nil hc is valid.
func (c *Checker) Validate(hc *workv1alpha1.HealthCheck) error {
	if hc == nil {
		return nil
	}
	var errs field.ErrorList
	if len(hc.Feedback) == 0 && hc.Expression == "" {
		errs = append(errs, field.Required(Path, "a health check needs feedback checks, an expression or both: without them it checks nothing"))
	}
	for i, fc := range hc.Feedback {
		p := Path.Child("feedback").Index(i)
		if fc.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), "name the status feedback value to check, e.g. AvailableReplicas"))
		}
		switch {
		case fc.EqualsValue == "" && fc.Equals == "":
			errs = append(errs, field.Required(p, "set one of equalsValue (another feedback value, e.g. Replicas) and equals (a literal)"))
		case fc.EqualsValue != "" && fc.Equals != "":
			errs = append(errs, field.Invalid(p, fmt.Sprintf("equalsValue=%s, equals=%s", fc.EqualsValue, fc.Equals), "set only one of equalsValue and equals"))
		case fc.EqualsValue != "" && fc.EqualsValue == fc.Name:
			errs = append(errs, field.Invalid(p.Child("equalsValue"), fc.EqualsValue, "a value always equals itself: name another value"))
		}
	}
	if hc.Expression != "" {
		if _, err := c.compile(hc.Expression); err != nil {
			errs = append(errs, field.Invalid(Path.Child("expression"), hc.Expression, "the expression "+err.Error()))
		}
	}
	return errs.ToAggregate()
}
