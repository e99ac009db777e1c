package v1

// The types in this file are Flotilla extensions of the OCM schema: OCM
// reports a template's compliance only as messages, Flotilla also reports
// what it found object by object, so that a tool need not parse messages.
// They appear in status.details[].results of a replicated Policy, and in
// the output of `flotilla policy test`. See docs/policy-results.md.

// TemplateResults is what the last evaluation of one policy template found,
// object by object.
type TemplateResults struct {
	// objects are the objects the template's object templates matched,
	// created, updated, deleted or looked for, in object-template order.
	// +optional
	Objects []ObjectResult `json:"objects,omitempty"`
	// errors are the object templates that could not be evaluated (an
	// unknown kind, an invalid object, a template that does not resolve),
	// each with its index and why.
	// +optional
	Errors []TemplateError `json:"errors,omitempty"`
	// omitted counts the objects left out of objects to keep the status
	// small; the messages still count them.
	// +optional
	Omitted int32 `json:"omitted,omitempty"`
}

// ObjectResult is the outcome of one object template for one object.
type ObjectResult struct {
	// objectTemplate is the index of the object template in
	// spec.object-templates (after object-templates-raw is resolved).
	ObjectTemplate int32 `json:"objectTemplate"`
	// object identifies the object; its name is empty for an unnamed
	// template that matched no object.
	Object ObjectResource `json:"object"`
	// compliant is Compliant or NonCompliant.
	// +kubebuilder:validation:Enum=Compliant;NonCompliant
	Compliant ComplianceState `json:"compliant"`
	// reason says why, in the words of relatedObjects[].reason (for example
	// "Resource found but does not match").
	// +optional
	Reason string `json:"reason,omitempty"`
	// diffs are the fields that differ from the template (violations of
	// musthave and mustonlyhave only). Values are left out for sensitive
	// objects (Secrets, or templates that read Secrets), and the whole list
	// when the object template's recordDiff is None.
	// +optional
	Diffs []FieldDiff `json:"diffs,omitempty"`
	// message says what the reason does not: why enforce left the object
	// alone (a template that names no object is only informed), what a
	// deletion still waits for, how the API server changed an object
	// enforce created or updated, or why enforce failed.
	// +optional
	Message string `json:"message,omitempty"`
}

// FieldDiff is one field where an object differs from its template.
type FieldDiff struct {
	// path names the field, for example "data.key",
	// "spec.containers[name=nginx].image" or "spec.ports[]" (a list item
	// that is missing, or that must not be there).
	Path string `json:"path"`
	// expected is the template's value as JSON; empty when the field must
	// not be there (mustonlyhave) or the value is withheld.
	// +optional
	Expected string `json:"expected,omitempty"`
	// actual is the object's value as JSON; empty when the object lacks the
	// field or the value is withheld.
	// +optional
	Actual string `json:"actual,omitempty"`
}

// TemplateError is an object template that could not be evaluated.
type TemplateError struct {
	// objectTemplate is the index of the object template, or -1 when the
	// whole policy template is at fault (for example object-templates-raw
	// does not resolve, or its kind is not supported).
	ObjectTemplate int32 `json:"objectTemplate"`
	// reason is a short summary, for example "Error processing template".
	// +optional
	Reason string `json:"reason,omitempty"`
	// message says what is wrong.
	// +optional
	Message string `json:"message,omitempty"`
}
