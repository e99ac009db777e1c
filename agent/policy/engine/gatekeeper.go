package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	"github.com/flotilla-io/flotilla/internal/policykinds"
)

// KindResult is the evaluation of a policy template of a kind other than
// ConfigurationPolicy.
type KindResult struct {
	// State is the template's compliance.
	State policyv1.ComplianceState
	// Message is its history message, in OCM's words.
	Message string
	// Results are what it found, object by object.
	Results *policyv1.TemplateResults
	// Certificates is the status of a CertificatePolicy.
	Certificates *policyv1.CertificatePolicyStatus
	// Next, when set, is how soon the outcome may change by time alone
	// (a certificate comes within its minimum duration).
	Next time.Duration
}

func (k *KindResult) nextAfter(d time.Duration) {
	if d > 0 && (k.Next == 0 || d < k.Next) {
		k.Next = d
	}
}

// kindError is a template that cannot be evaluated, reported as a
// template-error.
func kindError(format string, args ...any) *KindResult {
	err := fmt.Errorf(format, args...)
	return &KindResult{State: policyv1.NonCompliant, Message: TemplateErrorMessage(err), Results: TemplateErrorResults(err)}
}

// EvaluateKind evaluates a template of another kind than
// ConfigurationPolicy (t.CertificatePolicy or t.Gatekeeper) against r at
// now. An error is one of reading r, to be tried again.
func EvaluateKind(ctx context.Context, t PolicyTemplate, r Reader, now time.Time) (*KindResult, error) {
	switch {
	case t.CertificatePolicy != nil:
		return evaluateCertificates(ctx, t.CertificatePolicy, r, now)
	case t.Gatekeeper != nil && t.Gatekeeper.GroupVersionKind().Group == policykinds.GatekeeperConstraintsGroup:
		return evaluateConstraint(ctx, t.Gatekeeper, r)
	case t.Gatekeeper != nil:
		return evaluateConstraintTemplate(ctx, t.Gatekeeper, r)
	}
	return nil, fmt.Errorf("policy template %d is of no kind the engine evaluates", t.Index)
}

var crdGVK = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// constraintCRD is the name of the CRD Gatekeeper makes for a
// ConstraintTemplate's constraint kind.
func constraintCRD(kind string) string {
	return strings.ToLower(kind) + "." + policykinds.GatekeeperConstraintsGroup
}

// served reads the CRD of a Gatekeeper kind (so that a watching reader
// tells when it comes) and maps the kind; m is nil when it is not served.
func served(ctx context.Context, r Reader, gvk schema.GroupVersionKind, crd string) (m *meta.RESTMapping, missing, err error) {
	cm, err := r.Mapping(crdGVK)
	switch {
	case err == nil:
		obj, err := r.Get(ctx, cm, "", crd)
		if err != nil {
			return nil, nil, err
		}
		if obj == nil {
			return nil, fmt.Errorf("no matches for kind %q in version %q", gvk.Kind, gvk.GroupVersion()), nil
		}
	case !meta.IsNoMatchError(err):
		return nil, nil, err
	}
	m, err = r.Mapping(gvk)
	if meta.IsNoMatchError(err) {
		return nil, err, nil
	}
	return m, nil, err
}

// evaluateConstraintTemplate reports a ConstraintTemplate as OCM's
// framework does, from Gatekeeper's status.created.
func evaluateConstraintTemplate(ctx context.Context, u *unstructured.Unstructured, r Reader) (*KindResult, error) {
	m, missing, err := served(ctx, r, u.GroupVersionKind(), "constrainttemplates."+policykinds.GatekeeperTemplatesGroup)
	if err != nil {
		return nil, err
	}
	if missing != nil {
		return kindError("Mapping not found, check if Gatekeeper is installed: %v", missing), nil
	}
	obj, err := r.Get(ctx, m, "", u.GetName())
	if err != nil {
		return nil, err
	}
	if obj == nil {
		return kindError("ConstraintTemplate %s was not found on the cluster", u.GetName()), nil
	}
	created, ok, _ := unstructured.NestedBool(obj.Object, "status", "created")
	switch {
	case !ok:
		return kindError("Failed to retrieve status.created from ConstraintTemplate %s: Gatekeeper has not reported on it yet", u.GetName()), nil
	case !created:
		return kindError("Failed to create Gatekeeper ConstraintTemplate. Check the status of %s.", u.GetName()), nil
	}
	return &KindResult{
		State:   policyv1.Compliant,
		Message: fmt.Sprintf("%s; %s %s was created successfully", policyv1.Compliant, policykinds.ConstraintTemplateKind, u.GetName()),
		Results: &policyv1.TemplateResults{Objects: []policyv1.ObjectResult{{Object: objectResource(obj), Compliant: policyv1.Compliant, Reason: "ConstraintTemplate created"}}},
	}, nil
}

// evaluateConstraint reports a constraint's audited violations as OCM's
// framework does: status.totalViolations and status.violations, which
// Gatekeeper's audit writes.
func evaluateConstraint(ctx context.Context, u *unstructured.Unstructured, r Reader) (*KindResult, error) {
	m, missing, err := served(ctx, r, u.GroupVersionKind(), constraintCRD(u.GetKind()))
	if err != nil {
		return nil, err
	}
	if missing != nil {
		return kindError("Mapping not found, check if the required ConstraintTemplate has been deployed: %v", missing), nil
	}
	obj, err := r.Get(ctx, m, "", u.GetName())
	if err != nil {
		return nil, err
	}
	if obj == nil {
		return kindError("%s %s was not found on the cluster", u.GetKind(), u.GetName()), nil
	}
	total, audited := totalViolations(obj)
	if !audited {
		return &KindResult{State: policyv1.Pending,
			Message: fmt.Sprintf("%s; Gatekeeper's audit has not reported on %s %s yet", policyv1.Pending, u.GetKind(), u.GetName())}, nil
	}
	res := &KindResult{State: policyv1.NonCompliant, Results: &policyv1.TemplateResults{}}
	violations, _, verr := unstructured.NestedSlice(obj.Object, "status", "violations")
	var msgs []string
	for _, v := range violations {
		vm, ok := v.(map[string]any)
		if !ok {
			continue
		}
		str := func(k string) string { s, _ := vm[k].(string); return s }
		name := str("name")
		if ns := str("namespace"); ns != "" {
			name = ns + "/" + name
		}
		msgs = append(msgs, fmt.Sprintf("%s - %s (on %s %s)", str("enforcementAction"), str("message"), str("kind"), name))
		res.Results.Objects = append(res.Results.Objects, policyv1.ObjectResult{
			Object:    policyv1.ObjectResource{Kind: str("kind"), APIVersion: str("version"), Metadata: policyv1.ObjectMetadata{Name: str("name"), Namespace: str("namespace")}},
			Compliant: policyv1.NonCompliant, Reason: str("enforcementAction"), Message: str("message"),
		})
	}
	msg := strings.Join(msgs, "; ")
	switch {
	case verr != nil:
		msg = "The constraint status is invalid"
	case len(msgs) == 0 && total > 0:
		msg = fmt.Sprintf("The constraint has %d violations; Gatekeeper's audit lists none of them", total)
	case len(msgs) == 0:
		res.State, msg = policyv1.Compliant, "The constraint has no violations"
	}
	if action, _, _ := unstructured.NestedString(obj.Object, "spec", "enforcementAction"); strings.EqualFold(action, "deny") {
		wm, err := r.Mapping(schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration"})
		if err != nil {
			return nil, err
		}
		hook, err := r.Get(ctx, wm, "", GatekeeperWebhookName)
		if err != nil {
			return nil, err
		}
		if hook == nil {
			res.State = policyv1.NonCompliant
			msg = fmt.Sprintf("The Gatekeeper validating webhook is disabled but the constraint's spec.enforcementAction is %s. %s", action, msg)
		}
	}
	res.Message = string(res.State) + "; " + msg
	return res, nil
}

// objectResource names obj in results.
func objectResource(obj *unstructured.Unstructured) policyv1.ObjectResource {
	return policyv1.ObjectResource{Kind: obj.GetKind(), APIVersion: obj.GetAPIVersion(),
		Metadata: policyv1.ObjectMetadata{Name: obj.GetName(), Namespace: obj.GetNamespace()}}
}

// totalViolations is the constraint's status.totalViolations, whatever
// number type its decoding gave; audited says it is set.
func totalViolations(obj *unstructured.Unstructured) (total int64, audited bool) {
	v, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "status", "totalViolations")
	switch n := v.(type) {
	case int64:
		return n, found
	case int:
		return int64(n), found
	case float64:
		return int64(n), found
	}
	return 0, false
}
