package policy

// recorderName is the reporting controller of the events this package emits.
const recorderName = "flotilla-hub-policy"

// maxRootNameLength is the most characters a root policy's namespace and
// name may have together, as OCM allows: its copies are named
// "<ns>.<name>", a name that is also a label value (RootPolicyLabel), and
// so must fit 63 characters with the dot.
const maxRootNameLength = 62

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
