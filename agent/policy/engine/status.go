package engine

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	"github.com/flotilla-io/flotilla/internal/policytemplate"
)

// DefaultResultsLimit is how many objects Results reports per policy
// template by default; the rest are counted in Omitted.
const DefaultResultsLimit = 100

// CompliancyDetails is the result as ConfigurationPolicy
// status.compliancyDetails: one entry per object template, with one
// condition (violation or notification) stamped now.
func (r *Result) CompliancyDetails(now metav1.Time) []policyv1.TemplateStatus {
	var out []policyv1.TemplateStatus
	if r.Err != nil {
		out = append(out, policyv1.TemplateStatus{ComplianceState: policyv1.NonCompliant, Conditions: []policyv1.TemplateCondition{{
			Type: policyv1.ConditionViolation, Status: "True", LastTransitionTime: now, Reason: r.Err.Reason, Message: r.condition(r.Err.Message),
		}}})
	}
	for _, t := range r.Templates {
		state := policyv1.Compliant
		if !t.Compliant {
			state = policyv1.NonCompliant
		}
		out = append(out, policyv1.TemplateStatus{ComplianceState: state, Conditions: []policyv1.TemplateCondition{{
			Type: t.conditionType(), Status: "True", LastTransitionTime: now, Reason: t.Reason, Message: r.condition(t.Message),
		}}})
	}
	return out
}

// condition is a compliancy condition's message: redacted, and cut to
// policytemplate.MessageLimit.
func (r *Result) condition(msg string) string {
	return policytemplate.Cap(r.secrets.Redact(msg), policytemplate.MessageLimit, WholeInResults)
}

// detail is a message of the structured results: redacted, and cut to
// policytemplate.DetailLimit.
func (r *Result) detail(msg string) string {
	return policytemplate.Cap(r.secrets.Redact(msg), policytemplate.DetailLimit, "")
}

// RelatedObjects is the result as ConfigurationPolicy status.relatedObjects:
// each object that a template named or matched. created says whether the
// policy created the object with that UID, in this evaluation or before.
func (r *Result) RelatedObjects(created func(types.UID) bool) []policyv1.RelatedObject {
	var out []policyv1.RelatedObject
	for _, t := range r.Templates {
		for _, o := range t.Objects {
			if o.Object.Metadata.Name == "" {
				continue
			}
			ro := policyv1.RelatedObject{Object: o.Object, Compliant: string(o.Compliant), Reason: o.Reason}
			if o.UID != "" && o.Reason != ReasonDeleted {
				ro.Properties = &policyv1.ObjectProperties{UID: string(o.UID)}
				if o.Created || (created != nil && created(o.UID)) {
					ro.Properties.CreatedByPolicy = ptr.To(true)
				}
			}
			out = append(out, ro)
		}
	}
	return out
}

// Results is the result in the wire shape of status.details[].results:
// at most limit objects (0: DefaultResultsLimit), with diff values
// withheld for sensitive objects and diffs left out where recordDiff is
// None.
func (r *Result) Results(limit int) *policyv1.TemplateResults {
	if limit <= 0 {
		limit = DefaultResultsLimit
	}
	out := &policyv1.TemplateResults{}
	if r.Err != nil {
		e := *r.Err
		e.Message = r.detail(e.Message)
		out.Errors = append(out.Errors, e)
	}
	for _, t := range r.Templates {
		if t.Err != nil {
			e := *t.Err
			e.Message = r.detail(e.Message)
			out.Errors = append(out.Errors, e)
		}
		for _, o := range t.Objects {
			if len(out.Objects) >= limit {
				out.Omitted++
				continue
			}
			w := o.ObjectResult
			w.Message = r.detail(w.Message)
			w.Diffs = nil
			if !t.NoDiffs {
				for _, d := range o.Diffs {
					if t.Sensitive {
						d.Expected, d.Actual = "", ""
					}
					d.Path, d.Expected, d.Actual = r.secrets.Redact(d.Path), r.secrets.Redact(d.Expected), r.secrets.Redact(d.Actual)
					w.Diffs = append(w.Diffs, d)
				}
			}
			out.Objects = append(out.Objects, w)
		}
	}
	return out
}
