package policy

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	"github.com/flotilla-io/flotilla/internal/policykinds"
	"github.com/flotilla-io/flotilla/internal/policytemplate"
)

// RollUp is the compliance of a root policy from that of its clusters:
// NonCompliant if any cluster is, else Pending if any is, else Compliant
// when every cluster reported, else "" (unknown). No cluster gives "".
func RollUp(clusters []policyv1.ComplianceState) policyv1.ComplianceState {
	if len(clusters) == 0 {
		return ""
	}
	var pending, unknown bool
	for _, c := range clusters {
		switch c {
		case policyv1.NonCompliant:
			return policyv1.NonCompliant
		case policyv1.Pending:
			pending = true
		case policyv1.Compliant:
		default:
			unknown = true
		}
	}
	switch {
	case pending:
		return policyv1.Pending
	case unknown:
		return ""
	}
	return policyv1.Compliant
}

// setStatus writes placement[], status[] and compliant into the root's
// status, and queues an event when the compliance changed.
func (r *Reconciler) setStatus(_ context.Context, s *scope) (ctrl.Result, error) {
	st := &s.root.Status
	if len(st.Placement) == 0 && len(s.placements) == 0 && len(s.copies) == 0 && !nameTooLong(s.root) {
		// Never bound: not ours to report on (a copy made by hand may
		// carry this name).
		return ctrl.Result{}, nil
	}
	was := st.ComplianceState
	wasTooLong := len(st.Details) == 1 && len(st.Details[0].History) == 1 && st.Details[0].History[0].EventName == reasonNameTooLong
	st.Placement = s.placements
	st.Status = nil
	states := make([]policyv1.ComplianceState, 0, len(s.clusters))
	for _, cluster := range s.clusters {
		cp, ok := s.copies[cluster]
		var c policyv1.ComplianceState
		if ok {
			c = cp.Status.ComplianceState
		}
		st.Status = append(st.Status, policyv1.CompliancePerClusterStatus{ClusterName: cluster, ClusterNamespace: cluster, ComplianceState: c})
		states = append(states, c)
	}
	st.ComplianceState = RollUp(states)
	before := st.Details
	st.Details = nil
	if nameTooLong(s.root) {
		msg := fmt.Sprintf("not propagated: the namespace and name are %d characters together, the most is %d, as the copies' name %q must fit %d; shorten the namespace or the name",
			len(s.root.Namespace)+len(s.root.Name), maxRootNameLength, rootName(s.root.Namespace, s.root.Name), maxRootNameLength+1)
		st.Details = []policyv1.DetailsPerTemplate{{
			TemplateMeta: metav1.ObjectMeta{Name: s.root.Name},
			History:      []policyv1.ComplianceHistory{{Message: msg, EventName: reasonNameTooLong}},
		}}
		if !wasTooLong {
			s.events.Add(corev1.EventTypeWarning, reasonNameTooLong, "Propagate", "%s", msg)
		}
	}
	st.Details = append(st.Details, templateErrors(s.root)...)
	for _, d := range st.Details {
		if d.History[0].EventName == reasonTemplateError && !slices.ContainsFunc(before, func(b policyv1.DetailsPerTemplate) bool {
			return len(b.History) > 0 && b.History[0].Message == d.History[0].Message
		}) {
			s.events.Add(corev1.EventTypeWarning, reasonTemplateError, "Validate", "%s",
				policytemplate.Cap(d.History[0].Message, policytemplate.MessageLimit, "the whole error is in the Policy's status.details"))
		}
	}
	if st.ComplianceState != was {
		s.events.Add(corev1.EventTypeNormal, reasonComplianceChanged, "RollUp", "compliance is %s (was %s) over %d clusters",
			orUnknown(st.ComplianceState), orUnknown(was), len(s.clusters))
	}
	return ctrl.Result{}, nil
}

// templateErrors are the root's policy templates that every cluster
// would report as a template-error (an unknown or misplaced field, a
// value the schema does not allow, no name), found by the same strict
// decoding as the agent's and `flotilla policy test`'s, so that the
// policy's author sees them on the root too. A template with hub
// templates ({{hub ... hub}}) is checked once they are resolved, by the
// agent.
func templateErrors(root *policyv1.Policy) []policyv1.DetailsPerTemplate {
	var out []policyv1.DetailsPerTemplate
	for _, t := range policytemplate.Decode(root) {
		// Templates of the other kinds the agent evaluates
		// (CertificatePolicy, Gatekeeper's) are checked by the agent.
		if t.Err == nil || policykinds.Other(t) || bytes.Contains(root.Spec.PolicyTemplates[t.Index].ObjectDefinition.Raw, []byte("{{hub")) {
			continue
		}
		if policykinds.Unsupported(t) {
			t.Err = policykinds.UnsupportedError(t)
		}
		out = append(out, policyv1.DetailsPerTemplate{
			TemplateMeta:    metav1.ObjectMeta{Name: t.DisplayName()},
			ComplianceState: policyv1.NonCompliant,
			History: []policyv1.ComplianceHistory{{EventName: reasonTemplateError,
				Message: policytemplate.Cap(string(policyv1.NonCompliant)+"; template-error; "+t.Err.Error(), policytemplate.DetailLimit, "")}},
		})
	}
	return out
}

func orUnknown(c policyv1.ComplianceState) string {
	if c == "" {
		return "unknown"
	}
	return string(c)
}
