package engine

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

// outcome is how an object's reason reads in a template's message, and
// the compliancyDetails reason that goes with it.
type outcome struct {
	verb, reason string
}

// outcomes are the reasons that messages group, in OCM's order: a message
// lists created objects before updated ones, and so on.
var outcomes = []struct {
	reason string
	outcome
}{
	{ReasonFoundAsExpected, outcome{"found as specified", "K8s `must have` object already exists"}},
	{ReasonCreated, outcome{"was created successfully", ReasonCreated}},
	{ReasonUpdated, outcome{"was updated successfully", ReasonUpdated}},
	{ReasonDeleted, outcome{"was deleted successfully", ReasonDeleted}},
	{ReasonNotFound, outcome{"not found", "K8s does not have a `must have` object"}},
	{ReasonFoundNoMatch, outcome{"found but not as specified", "K8s does not have a `must have` object"}},
	{ReasonNotFoundAsExpected, outcome{"missing as expected", "K8s `must not have` object already missing"}},
	{ReasonFoundNotWanted, outcome{"found", "K8s has a `must not have` object"}},
}

// outcomeOf returns the grouping of reason; ok is false for reasons whose
// objects carry a message of their own.
func outcomeOf(reason string) (outcome, int, bool) {
	if reason == ReasonFoundNotApplicable {
		reason = ReasonNotFoundAsExpected
	}
	for i, o := range outcomes {
		if o.reason == reason {
			return o.outcome, i, true
		}
	}
	return outcome{}, len(outcomes), false
}

// summarize sets the template's compliance, reason and message from its
// objects, as OCM words them: when any object violates the template, only
// the violations are reported; objects are grouped by outcome (in OCM's
// order), then by the names found in each namespace, e.g.
// "pods [a, b] found but not as specified in namespaces: x, y".
func (t *TemplateResult) summarize() {
	if t.Err != nil {
		t.Compliant, t.Reason, t.Message = false, t.Err.Reason, t.Err.Message
		return
	}
	t.Compliant = true
	for _, o := range t.Objects {
		if o.Compliant != policyv1.Compliant {
			t.Compliant = false
		}
	}
	if t.empty != "" && t.Compliant {
		t.Reason, t.Message = "", t.empty
		return
	}
	// group[outcome][namespace] are the names found with that outcome.
	type nsNames map[string][]string
	groups := map[int]nsNames{}
	var custom []string
	for _, o := range t.Objects {
		if (o.Compliant == policyv1.Compliant) != t.Compliant {
			continue
		}
		_, i, ok := outcomeOf(o.Reason)
		if !ok {
			custom = append(custom, o.message)
			continue
		}
		if groups[i] == nil {
			groups[i] = nsNames{}
		}
		ns := o.Object.Metadata.Namespace
		names := groups[i][ns]
		if n := o.Object.Metadata.Name; n != "" && !slices.Contains(names, n) {
			names = append(names, n)
		}
		groups[i][ns] = names
	}

	var reasons, clauses []string
	for i, oc := range outcomes {
		byNS, ok := groups[i]
		if !ok {
			continue
		}
		reasons = append(reasons, oc.outcome.reason)
		// Namespaces with the same names share a clause.
		nsByNames := map[string][]string{}
		for ns, names := range byNS {
			sort.Strings(names)
			key := ""
			if len(names) > 0 {
				key = " [" + strings.Join(names, ", ") + "]"
			}
			nsByNames[key] = append(nsByNames[key], ns)
		}
		keys := make([]string, 0, len(nsByNames))
		for k := range nsByNames {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			clause := t.Resource + k + " " + oc.verb
			nss := nsByNames[k]
			sort.Strings(nss)
			switch {
			case len(nss) == 1 && nss[0] == "":
			case len(nss) == 1:
				clause += " in namespace " + nss[0]
			default:
				clause += " in namespaces: " + strings.Join(nss, ", ")
			}
			clauses = append(clauses, clause)
		}
	}
	if len(custom) > 0 {
		sort.Strings(custom)
		clauses = append(clauses, custom...)
		for _, o := range t.Objects {
			if _, _, ok := outcomeOf(o.Reason); !ok && !slices.Contains(reasons, o.Reason) {
				reasons = append(reasons, o.Reason)
			}
		}
	}
	t.Reason = strings.Join(reasons, "; ")
	t.Message = strings.Join(clauses, "; ")
}

// templateError makes t an object template that could not be evaluated.
func (t *TemplateResult) templateError(reason, format string, args ...any) *TemplateResult {
	t.Err = &policyv1.TemplateError{ObjectTemplate: int32(t.Index), Reason: reason, Message: fmt.Sprintf(format, args...)}
	t.Objects = nil
	t.summarize()
	return t
}
