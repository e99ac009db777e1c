package policy

// recorderName is the reporting controller of the events this package emits.
const recorderName = "flotilla-hub-policy"

// maxReplicatedNameLength is the longest "<ns>.<name>" a root policy may
// have: a replicated policy's name is also a label value (63), and OCM
// keeps one character in reserve.
const maxReplicatedNameLength = 62

// Event reasons.
const (
	reasonComplianceChanged = "ComplianceChanged"
	reasonNameTooLong       = "PolicyNameTooLong"
	reasonTemplateError     = "template-error"
)

// maxConcurrentReconciles bounds how many root policies are propagated at once.
const maxConcurrentReconciles = 2

// finalizer keeps a root policy until its copies are deleted.
const finalizer = "policy.flotilla.io/propagator"
