package engine

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	"github.com/flotilla-io/flotilla/internal/policytemplate"
)

// Reasons of related objects and ObjectResults, in OCM's words.
const (
	// ReasonFoundAsExpected: a musthave or mustonlyhave object matches.
	ReasonFoundAsExpected = "Resource found as expected"
	// ReasonFoundNoMatch: a musthave or mustonlyhave object differs.
	ReasonFoundNoMatch = "Resource found but does not match"
	// ReasonNotFound: a musthave or mustonlyhave object is missing.
	ReasonNotFound = "Resource not found but should exist"
	// ReasonFoundNotWanted: a mustnothave object exists.
	ReasonFoundNotWanted = "Resource found but should not exist"
	// ReasonNotFoundAsExpected: a mustnothave object is missing.
	ReasonNotFoundAsExpected = "Resource not found as expected"
	// ReasonFoundNotApplicable: a mustnothave object exists but differs from
	// the template, so it is not the one the template forbids.
	ReasonFoundNotApplicable = "Resource found but will not be handled in mustnothave mode"
	// ReasonCreated: enforce created the object.
	ReasonCreated = "K8s creation success"
	// ReasonUpdated: enforce updated the object.
	ReasonUpdated = "K8s update success"
	// ReasonDeleted: enforce deleted the object.
	ReasonDeleted = "K8s deletion success"
	// ReasonCreateError: enforce could not create the object.
	ReasonCreateError = "K8s creation error"
	// ReasonUpdateError: enforce could not update the object.
	ReasonUpdateError = "K8s update error"
	// ReasonDeleteError: enforce could not delete the object.
	ReasonDeleteError = "K8s deletion error"
	// ReasonDeletePending: the API server accepted the deletion of a
	// mustnothave object, which is still there (finalizers, a Terminating
	// namespace). Flotilla's: OCM reports it deleted.
	ReasonDeletePending = "K8s deletion pending"
	// ReasonCreatedNoMatch: enforce created the object and the API server
	// (an admission controller) changed it away from the template.
	// Flotilla's.
	ReasonCreatedNoMatch = "K8s creation success but does not match"
	// ReasonUpdatedNoMatch: enforce updated the object and the API server
	// changed it away from the template again. Flotilla's.
	ReasonUpdatedNoMatch = "K8s update success but does not match"
	// ReasonTemplateError: a Go template in the object template does not resolve.
	ReasonTemplateError = "Error processing template"
	// ReasonDecodeError: the object template is not a valid object.
	ReasonDecodeError = "K8s decode object definition error"
	// ReasonMappingError: the cluster does not serve the template's kind.
	ReasonMappingError = "K8s error"
	// ReasonMissingNamespace: a namespaced template names no namespace and
	// the namespaceSelector selects none.
	ReasonMissingNamespace = "K8s missing namespace"
	// ReasonNamespaceSelectorError: the namespaceSelector is invalid.
	ReasonNamespaceSelectorError = "namespaceSelector error"
	// ReasonObjectSelectorError: the objectSelector is invalid.
	ReasonObjectSelectorError = "objectSelector error"
)

// Result is the outcome of evaluating one ConfigurationPolicy.
type Result struct {
	// Name is the ConfigurationPolicy's name.
	Name string
	// Enforce says whether Actions are meant to be performed.
	Enforce bool
	// Severity is the policy's severity, as given.
	Severity policyv1.Severity
	// Templates has one entry per object template, in order.
	Templates []*TemplateResult
	// Actions are what enforce does to comply, in template order. Empty
	// for inform. Report each outcome with Done.
	Actions []*Action
	// Err, when set, says why no object template could be evaluated (for
	// example object-templates-raw does not resolve); Templates is empty.
	Err *policyv1.TemplateError
	// policy is the evaluated ConfigurationPolicy, whose customMessage
	// Message renders.
	policy *policyv1.ConfigurationPolicy
	// secrets are the values of the Secrets the evaluation read, redacted
	// from every message it gives.
	secrets *policytemplate.Secrets
}

// TemplateResult is the outcome of one object template.
type TemplateResult struct {
	// Index is the object template's index.
	Index int
	// Resource is the plural resource name used in messages ("namespaces").
	Resource string
	// Compliant says whether the template is complied with.
	Compliant bool
	// Reason is the compliancyDetails reason, e.g. "K8s does not have a `must have` object".
	Reason string
	// Message is the compliancyDetails message, e.g. "namespaces [prod] not found".
	Message string
	// Objects are the objects the template matched or looked for.
	Objects []*ObjectResult
	// Err is set when the template could not be evaluated.
	Err *policyv1.TemplateError
	// Sensitive says whether diff values must be withheld (a Secret, or a
	// template that read one); NoDiffs whether diffs are left out entirely
	// (recordDiff None).
	Sensitive, NoDiffs bool
	// empty, when set, is the whole message of a template whose
	// objectSelector selected nothing.
	empty string
}

// ObjectResult is the outcome of one object template for one object: the
// wire shape, and what the evaluation knows beyond it.
type ObjectResult struct {
	policyv1.ObjectResult `json:",inline"`
	// UID is the object's UID when it exists (or was created).
	UID types.UID `json:"-"`
	// Created says whether enforce created the object in this evaluation.
	Created bool `json:"-"`
	// message is the clause of an outcome outside OCM's fixed wording
	// (an enforce error).
	message string
	// statusDiffs says whether the object differs in status, which enforce
	// cannot change.
	statusDiffs bool
	// mapping is the object's resource and scope.
	mapping *meta.RESTMapping
}

// Waiting is an object whose deletion the API server accepted and has
// not finished.
type Waiting struct {
	Mapping         *meta.RESTMapping
	Namespace, Name string
}

// Waiting are the objects whose deletion the result waits for: the
// caller watches them, so that the policy is evaluated again as soon as
// they are gone.
func (r *Result) Waiting() []Waiting {
	var out []Waiting
	for _, t := range r.Templates {
		for _, o := range t.Objects {
			if o.Reason == ReasonDeletePending && o.mapping != nil {
				out = append(out, Waiting{Mapping: o.mapping, Namespace: o.Object.Metadata.Namespace, Name: o.Object.Metadata.Name})
			}
		}
	}
	return out
}

// ActionType is what an Action does.
type ActionType string

// Action types.
const (
	// ActionCreate creates Action.Object.
	ActionCreate ActionType = "create"
	// ActionUpdate patches the object with Action.Patch, which turns the
	// object as read into Action.Object.
	ActionUpdate ActionType = "update"
	// ActionDelete deletes the object named by Action.Object, with its UID
	// as precondition.
	ActionDelete ActionType = "delete"
)

// Action is one change that enforce makes on the cluster.
type Action struct {
	// Type is create, update or delete.
	Type ActionType `json:"action"`
	// Mapping is the object's resource and scope.
	Mapping *meta.RESTMapping `json:"-"`
	// Object is the object to create, the updated object, or the object to delete.
	Object *unstructured.Unstructured `json:"-"`
	// Patch is, for an update, the JSON merge patch to send.
	Patch []byte `json:"-"`
	// Recreate is, for an update, the object template's recreateOption:
	// Always deletes the object and creates Object instead of patching;
	// IfRequired does so when the patch is refused as invalid (an
	// immutable field).
	Recreate policyv1.RecreateOption `json:"recreate,omitempty"`
	// Template is the index of the object template that asks for it.
	Template int `json:"objectTemplate"`
	// Ref names the object.
	Ref policyv1.ObjectResource `json:"object"`

	result *ObjectResult
	tmpl   *TemplateResult
	// want is, for an update, the object template, which the object the
	// API server returns must match (for a create, Object is);
	// mode and metaMode compare them.
	want           map[string]any
	mode, metaMode mode
}

// Outcome is, once Done recorded it, what the action's object reports:
// for an action that failed, why, in the words of the message (no value
// of a Secret).
func (a *Action) Outcome() string { return a.result.Message }

// String says what the action does, e.g. "create Namespace prod".
func (a *Action) String() string {
	return fmt.Sprintf("%s %s %s", a.Type, a.Ref.Kind, refName(a.Ref))
}

// refName is namespace/name, or name for cluster-scoped objects.
func refName(r policyv1.ObjectResource) string {
	if r.Metadata.Namespace == "" {
		return r.Metadata.Name
	}
	return r.Metadata.Namespace + "/" + r.Metadata.Name
}

// Compliance is the policy's compliance: NonCompliant when any template is.
func (r *Result) Compliance() policyv1.ComplianceState {
	if r.Err != nil {
		return policyv1.NonCompliant
	}
	for _, t := range r.Templates {
		if !t.Compliant {
			return policyv1.NonCompliant
		}
	}
	return policyv1.Compliant
}

// Message is the policy's compliance message in OCM's form: the compliance,
// then one clause per object template, e.g.
// "NonCompliant; violation - namespaces [prod] not found".
// A customMessage for the compliance replaces what follows "<compliance>; ".
func (r *Result) Message() string {
	var b strings.Builder
	if r.Err != nil {
		b.WriteString("violation - " + r.Err.Message)
	}
	for i, t := range r.Templates {
		if i > 0 || r.Err != nil {
			b.WriteString("; ")
		}
		b.WriteString(t.conditionType())
		b.WriteString(" - ")
		b.WriteString(t.Message)
	}
	msg := r.customMessage(b.String())
	if msg != "" {
		msg = string(r.Compliance()) + "; " + msg
	} else {
		msg = string(r.Compliance())
	}
	return policytemplate.Cap(r.secrets.Redact(msg), policytemplate.MessageLimit, WholeInResults)
}

// conditionType is violation or notification.
func (t *TemplateResult) conditionType() string {
	if t.Compliant {
		return policyv1.ConditionNotification
	}
	return policyv1.ConditionViolation
}

// Done records the outcome of performing a: err is nil when the API
// server accepted it, and obj is then the object as the API server shows
// it now: the one it returned for a create or update; for a delete, nil
// when the object is gone, or the object still there (its finalizers hold
// it). The action counts only when obj is as asked: a deletion still
// waiting, or an object that admission changed away from the template,
// keeps the object NonCompliant, with a message that says why. The
// template's compliance and message follow.
func (r *Result) Done(a *Action, obj *unstructured.Unstructured, err error) {
	o := a.result
	name := identifier(a.tmpl.Resource, a.Ref.Metadata.Name, a.Ref.Metadata.Namespace)
	var mutated []policyv1.FieldDiff
	if err == nil && obj != nil && a.Type != ActionDelete {
		want := a.want
		if want == nil {
			want = a.Object.Object
		}
		mutated = specOnly(compareObject(want, obj.Object, a.mode, a.metaMode))
	}
	switch {
	case err != nil:
		// OCM's words, with the API server's error as errorText words it.
		o.Compliant = policyv1.NonCompliant
		why := errorText(err, a.tmpl.Sensitive)
		switch a.Type {
		case ActionCreate:
			o.Reason, o.message = ReasonCreateError, fmt.Sprintf("%s is missing, and cannot be created, reason: `%s`", name, why)
		case ActionUpdate:
			o.Reason, o.message = ReasonUpdateError, fmt.Sprintf("%s failed to update with the error `%s`", name, why)
		case ActionDelete:
			o.Reason, o.message = ReasonDeleteError, fmt.Sprintf("%s exists, and cannot be deleted, reason: `%s`", name, why)
		}
		o.message = r.secrets.Redact(o.message)
		o.Message = o.message
	case a.Type == ActionDelete && obj != nil:
		o.Compliant, o.Reason = policyv1.NonCompliant, ReasonFoundNotWanted
		o.deleting(a.tmpl.Resource, obj)
	case len(mutated) > 0:
		o.Compliant, o.Diffs = policyv1.NonCompliant, mutated
		verb := "created"
		o.Reason = ReasonCreatedNoMatch
		if a.Type == ActionUpdate {
			verb, o.Reason = "updated", ReasonUpdatedNoMatch
		}
		if a.Type == ActionCreate {
			o.Created = true
		}
		o.UID = obj.GetUID()
		paths := make([]string, 0, len(mutated))
		for _, d := range mutated {
			paths = append(paths, d.Path)
		}
		o.message = fmt.Sprintf("%s was %s, but the API server changed it from the template: %s", name, verb, strings.Join(paths, ", "))
		o.Message = o.message
	case a.Type == ActionUpdate && o.statusDiffs:
		// The spec is fixed; the status, which only the object's own
		// controller writes, still differs.
		o.Diffs = statusOnly(o.Diffs)
	default:
		o.Compliant = policyv1.Compliant
		o.Diffs = nil
		switch a.Type {
		case ActionCreate:
			o.Reason, o.Created = ReasonCreated, true
		case ActionUpdate:
			o.Reason = ReasonUpdated
		case ActionDelete:
			o.Reason = ReasonDeleted
		}
		if obj != nil {
			o.UID = obj.GetUID()
		}
	}
	a.tmpl.summarize()
}

// identifier names an object in messages as OCM does:
// "<resource> [<name>] in namespace <ns>".
func identifier(resource, name, ns string) string {
	s := resource + " [" + name + "]"
	if ns != "" {
		s += " in namespace " + ns
	}
	return s
}

// deleting makes o an object whose deletion is accepted and not done:
// it says what the deletion waits for.
func (o *ObjectResult) deleting(resource string, obj *unstructured.Unstructured) {
	o.Reason = ReasonDeletePending
	o.UID = obj.GetUID()
	o.message = identifier(resource, obj.GetName(), obj.GetNamespace()) + " is being deleted, waiting for " + waitingFor(obj)
	o.Message = o.message
}

// waitingFor says what holds an object that is being deleted: its
// finalizers, and for a namespace its Terminating phase.
func waitingFor(obj *unstructured.Unstructured) string {
	var parts []string
	if f := obj.GetFinalizers(); len(f) > 0 {
		parts = append(parts, "finalizers "+strings.Join(f, ", "))
	}
	if obj.GetKind() == "Namespace" {
		// spec.finalizers are the namespace controller's, removed as it
		// empties the namespace: the phase says all.
		parts = append(parts, "namespace phase Terminating to end")
	}
	if len(parts) == 0 {
		return "the API server to remove it"
	}
	return strings.Join(parts, " and ")
}

// specOnly drops the diffs under status, which only an object's own
// controller writes.
func specOnly(diffs []policyv1.FieldDiff) []policyv1.FieldDiff {
	var out []policyv1.FieldDiff
	status := statusOnly(diffs)
	for _, d := range diffs {
		if !slices.Contains(status, d) {
			out = append(out, d)
		}
	}
	return out
}

// statusOnly keeps the diffs under status.
func statusOnly(diffs []policyv1.FieldDiff) []policyv1.FieldDiff {
	var out []policyv1.FieldDiff
	for _, d := range diffs {
		if d.Path == "status" || strings.HasPrefix(d.Path, "status.") || strings.HasPrefix(d.Path, "status[") {
			out = append(out, d)
		}
	}
	return out
}
