package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	"github.com/flotilla-io/flotilla/internal/policykinds"
	"github.com/flotilla-io/flotilla/internal/policytemplate"
)

// HistoryLimit is how many messages status.details[].history keeps.
const HistoryLimit = 10

// PolicyTemplate is one entry of a Policy's policy-templates, decoded.
type PolicyTemplate struct {
	// Index is the entry's index in spec.policy-templates.
	Index int
	// Name, Kind and APIVersion identify the template object.
	Name, Kind, APIVersion string
	// ConfigurationPolicy is the template with the Policy's
	// remediationAction applied; nil when Err is set or the template is
	// of another kind.
	ConfigurationPolicy *policyv1.ConfigurationPolicy
	// CertificatePolicy is a CertificatePolicy template, with the Policy's
	// remediationAction applied.
	CertificatePolicy *policyv1.CertificatePolicy
	// Gatekeeper is a Gatekeeper ConstraintTemplate or constraint, as the
	// agent applies it (see decodeKind).
	Gatekeeper *unstructured.Unstructured
	// Err says why the template cannot be evaluated: it is not a
	// ConfigurationPolicy, or not a valid one, or its hub templates did
	// not resolve.
	Err error
	// HubTemplateError says that Err is a hub template error: the
	// template is held as it is on the cluster until the hub resolves it.
	HubTemplateError bool
	// Dependencies are the policy's dependencies and the template's extra
	// ones: the template waits (Pending) until each is met.
	Dependencies []policyv1.PolicyDependency
	// IgnorePending leaves the template out of the policy's compliance while it is Pending.
	IgnorePending bool
}

// HubTemplatesErrorAnnotation is set by the hub on a policy template whose
// hub templates ({{hub ... hub}}) did not resolve; its value is the error.
// OCM's propagator sets the same.
const HubTemplatesErrorAnnotation = policytemplate.HubTemplatesErrorAnnotation

// PolicyTemplates decodes the policy templates of p, strictly, through
// the one validation the hub and `flotilla policy test` share
// (policytemplate.Decode). The Policy's remediationAction, when set,
// overrides each template's; a template without one informs.
func PolicyTemplates(p *policyv1.Policy) []PolicyTemplate {
	decoded := policytemplate.Decode(p)
	out := make([]PolicyTemplate, 0, len(decoded))
	for i, d := range decoded {
		pt := p.Spec.PolicyTemplates[i]
		t := PolicyTemplate{Index: i, Name: d.Name, Kind: d.Kind, APIVersion: d.APIVersion,
			Err: d.Err, HubTemplateError: d.HubTemplateError, IgnorePending: pt.IgnorePending}
		t.Dependencies = append(append(t.Dependencies, p.Spec.Dependencies...), pt.ExtraDependencies...)
		switch {
		case policykinds.Other(d):
			decodeKind(&t, p, pt.ObjectDefinition.Raw)
		case policykinds.Unsupported(d):
			t.Err = policykinds.UnsupportedError(d)
		}
		if cp := d.ConfigurationPolicy; cp != nil {
			if p.Spec.RemediationAction != "" {
				cp.Spec.RemediationAction = p.Spec.RemediationAction
			}
			if cp.Spec.RemediationAction == "" {
				cp.Spec.RemediationAction = policyv1.Inform
			}
			t.ConfigurationPolicy = cp
		}
		out = append(out, t)
	}
	return out
}

// DisplayName is the name status.details[].templateMeta records: the
// template's, or OCM's template-<index> for a template without one.
func (t PolicyTemplate) DisplayName() string {
	if t.Name != "" {
		return t.Name
	}
	return fmt.Sprintf("template-%d", t.Index)
}

// TemplateErrorMessage is the history message of a policy template that
// cannot be evaluated, in OCM's form.
// The message is cut to policytemplate.MessageLimit; the whole error is in
// the template's results (TemplateErrorResults).
func TemplateErrorMessage(err error) string {
	return policytemplate.Cap(string(policyv1.NonCompliant)+"; template-error; "+err.Error(), policytemplate.MessageLimit, WholeInResults)
}

// TemplateErrorResults are the results of a policy template that cannot
// be evaluated: its error, cut to policytemplate.DetailLimit.
func TemplateErrorResults(err error) *policyv1.TemplateResults {
	return &policyv1.TemplateResults{Errors: []policyv1.TemplateError{{ObjectTemplate: -1, Reason: "template-error",
		Message: policytemplate.Cap(err.Error(), policytemplate.DetailLimit, "")}}}
}

// RecordHistory returns history with msg as its newest entry, unless it is
// the newest already, keeping at most HistoryLimit entries; changed says
// whether it added msg.
func RecordHistory(history []policyv1.ComplianceHistory, msg string, now metav1.Time) (_ []policyv1.ComplianceHistory, changed bool) {
	if len(history) > 0 && history[0].Message == msg {
		return history, false
	}
	out := append([]policyv1.ComplianceHistory{{LastTimestamp: now, Message: msg}}, history...)
	if len(out) > HistoryLimit {
		out = out[:HistoryLimit]
	}
	return out, true
}

// Rollup is the compliance of a whole from its parts: NonCompliant when
// any is, else Pending when any is, else Compliant; empty without parts.
func Rollup(states ...policyv1.ComplianceState) policyv1.ComplianceState {
	if len(states) == 0 {
		return ""
	}
	out := policyv1.Compliant
	for _, s := range states {
		switch s {
		case policyv1.NonCompliant:
			return policyv1.NonCompliant
		case policyv1.Pending:
			out = policyv1.Pending
		case policyv1.Compliant:
		default:
			out = policyv1.NonCompliant
		}
	}
	return out
}

// PolicyResult is the outcome of evaluating a whole Policy offline.
type PolicyResult struct {
	// Policy is the evaluated policy.
	Policy *policyv1.Policy
	// Templates has one entry per policy template.
	Templates []TemplateOutcome
}

// TemplateOutcome is the outcome of one policy template.
type TemplateOutcome struct {
	PolicyTemplate
	// Result is the evaluation of a ConfigurationPolicy; nil when the
	// template has an error or is of another kind.
	Result *Result
	// Other is the evaluation of a template of another kind.
	Other *KindResult
}

// EvaluatePolicy evaluates each ConfigurationPolicy of p against r. It
// performs no action: enforce templates report what they would do in
// Result.Actions, and their violations as inform would.
func EvaluatePolicy(ctx context.Context, p *policyv1.Policy, r Reader) *PolicyResult {
	out := &PolicyResult{Policy: p}
	for _, t := range PolicyTemplates(p) {
		o := TemplateOutcome{PolicyTemplate: t}
		switch {
		case t.Err != nil:
		case t.ConfigurationPolicy != nil:
			o.Result = Evaluate(ctx, t.ConfigurationPolicy, r)
		default:
			var err error
			if o.Other, err = EvaluateKind(ctx, t, r, time.Now()); err != nil {
				o.Other = kindError("%v", err)
			}
		}
		out.Templates = append(out.Templates, o)
	}
	return out
}

// State is the template's compliance.
func (o TemplateOutcome) State() policyv1.ComplianceState {
	if o.Other != nil {
		return o.Other.State
	}
	if o.Result == nil {
		return policyv1.NonCompliant
	}
	return o.Result.Compliance()
}

// Message is the template's history message.
func (o TemplateOutcome) Message() string {
	if o.Other != nil {
		return o.Other.Message
	}
	if o.Result == nil {
		return TemplateErrorMessage(o.Err)
	}
	return o.Result.Message()
}

// Status is the status the agent would report on the replicated policy
// after this evaluation, with one history entry per template.
func (p *PolicyResult) Status(now metav1.Time) policyv1.PolicyStatus {
	var st policyv1.PolicyStatus
	var states []policyv1.ComplianceState
	for _, t := range p.Templates {
		d := policyv1.DetailsPerTemplate{TemplateMeta: metav1.ObjectMeta{Name: t.DisplayName()}, ComplianceState: t.State()}
		d.History, _ = RecordHistory(nil, t.Message(), now)
		switch {
		case t.Other != nil:
			d.Results = t.Other.Results
		case t.Result != nil:
			d.Results = t.Result.Results(0)
		default:
			d.Results = TemplateErrorResults(t.Err)
		}
		st.Details = append(st.Details, d)
		states = append(states, d.ComplianceState)
	}
	st.ComplianceState = Rollup(states...)
	return st
}

// ErrNoPolicies says that input held no Policy or ConfigurationPolicy.
var ErrNoPolicies = errors.New("no Policy or ConfigurationPolicy found")
