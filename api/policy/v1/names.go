package v1

import "strings"

// Labels and annotations of the policy framework.
const (
	// ClusterNameLabel is set on a replicated policy to the managed cluster it was copied for.
	ClusterNameLabel = "policy.open-cluster-management.io/cluster-name"
	// ClusterNamespaceLabel is set on a replicated policy to the hub namespace of that managed cluster.
	ClusterNamespaceLabel = "policy.open-cluster-management.io/cluster-namespace"
	// RootPolicyLabel is set on a replicated policy to "<namespace>.<name>" of its root policy.
	RootPolicyLabel = "policy.open-cluster-management.io/root-policy"
	// PolicyLabel is set on a policy template created on a managed cluster to the name of the
	// replicated policy it comes from ("<namespace>.<name>" of the root policy).
	PolicyLabel = "policy.open-cluster-management.io/policy"
	// PolicyTypeLabel marks a CRD whose kind can be delivered in policy-templates.
	PolicyTypeLabel = "policy.open-cluster-management.io/policy-type"
	// PolicyTypeTemplate is the PolicyTypeLabel value of policy template kinds.
	PolicyTypeTemplate = "template"

	// StandardsAnnotation lists, comma separated, the security standards a policy supports.
	StandardsAnnotation = "policy.open-cluster-management.io/standards"
	// CategoriesAnnotation lists, comma separated, the security control categories of a policy.
	CategoriesAnnotation = "policy.open-cluster-management.io/categories"
	// ControlsAnnotation lists, comma separated, the security controls a policy checks.
	ControlsAnnotation = "policy.open-cluster-management.io/controls"
)

// ComplianceState is the compliance of a policy, a template or a cluster.
type ComplianceState string

// Compliance states.
const (
	// Compliant means every object matches its template.
	Compliant ComplianceState = "Compliant"
	// NonCompliant means at least one object violates its template.
	NonCompliant ComplianceState = "NonCompliant"
	// Pending means the template waits for its dependencies.
	Pending ComplianceState = "Pending"
	// Terminating means a ConfigurationPolicy is being deleted (ConfigurationPolicy only).
	Terminating ComplianceState = "Terminating"
)

// RemediationAction says whether a policy only reports (inform) or also fixes (enforce);
// values are case-insensitive on the wire, compare with IsInform and IsEnforce.
type RemediationAction string

// Remediation actions, in the spellings the schema accepts.
const (
	// Inform reports violations without changing the cluster.
	Inform RemediationAction = "inform"
	// Enforce changes the cluster to match the policy.
	Enforce RemediationAction = "enforce"
	// InformCapitalized is the capitalized spelling of Inform.
	InformCapitalized RemediationAction = "Inform"
	// EnforceCapitalized is the capitalized spelling of Enforce.
	EnforceCapitalized RemediationAction = "Enforce"
)

// IsInform reports whether a is inform, in any letter case.
func (a RemediationAction) IsInform() bool { return strings.EqualFold(string(a), string(Inform)) }

// IsEnforce reports whether a is enforce, in any letter case.
func (a RemediationAction) IsEnforce() bool { return strings.EqualFold(string(a), string(Enforce)) }

// ComplianceType says how objects on the cluster are compared with an object template;
// values are case-insensitive on the wire (MustHave, Musthave and musthave are equal), compare with Is.
type ComplianceType string

// Compliance types, in their canonical lower-case spelling.
const (
	// MustHave requires every field of the template on the object; extra fields are fine.
	MustHave ComplianceType = "musthave"
	// MustOnlyHave requires maps and lists of the object to equal the template exactly.
	MustOnlyHave ComplianceType = "mustonlyhave"
	// MustNotHave requires that no object matches the template.
	MustNotHave ComplianceType = "mustnothave"
)

// Is reports whether c and other name the same compliance type, ignoring letter case.
func (c ComplianceType) Is(other ComplianceType) bool {
	return strings.EqualFold(string(c), string(other))
}

// Severity is a user-defined severity of a violation.
//
// +kubebuilder:validation:Enum=low;Low;medium;Medium;high;High;critical;Critical
type Severity string

// Severities, in their canonical lower-case spelling.
const (
	// SeverityLow is a low severity.
	SeverityLow Severity = "low"
	// SeverityMedium is a medium severity.
	SeverityMedium Severity = "medium"
	// SeverityHigh is a high severity.
	SeverityHigh Severity = "high"
	// SeverityCritical is a critical severity.
	SeverityCritical Severity = "critical"
)

// PruneObjectBehavior says which objects a ConfigurationPolicy deletes when it stops managing them.
//
// +kubebuilder:validation:Enum=DeleteAll;DeleteIfCreated;None
type PruneObjectBehavior string

// Prune behaviours.
const (
	// PruneDeleteAll deletes every object the policy managed.
	PruneDeleteAll PruneObjectBehavior = "DeleteAll"
	// PruneDeleteIfCreated deletes only the objects the policy created.
	PruneDeleteIfCreated PruneObjectBehavior = "DeleteIfCreated"
	// PruneNone deletes nothing.
	PruneNone PruneObjectBehavior = "None"
)

// RecreateOption says when an object is deleted and created again instead of updated.
//
// +kubebuilder:validation:Enum=None;IfRequired;Always
type RecreateOption string

// Recreate options.
const (
	// RecreateNone never recreates; an update that fails stays failed.
	RecreateNone RecreateOption = "None"
	// RecreateIfRequired recreates when an update would change an immutable field.
	RecreateIfRequired RecreateOption = "IfRequired"
	// RecreateAlways recreates on every update.
	RecreateAlways RecreateOption = "Always"
)

// RecordDiff says where the difference between an object and its template is recorded.
//
// +kubebuilder:validation:Enum=Log;InStatus;None
type RecordDiff string

// Places to record a difference.
const (
	// RecordDiffLog logs the difference in the controller's log.
	RecordDiffLog RecordDiff = "Log"
	// RecordDiffInStatus records the difference in status.relatedObjects[].properties.diff.
	RecordDiffInStatus RecordDiff = "InStatus"
	// RecordDiffNone does not record the difference.
	RecordDiffNone RecordDiff = "None"
)

// TerminatingInclusion says whether objects being deleted are selected.
//
// +kubebuilder:validation:Enum=IfMatch;Never;Default
type TerminatingInclusion string

// Terminating inclusions.
const (
	// TerminatingIfMatch selects terminating objects that match the other filters.
	TerminatingIfMatch TerminatingInclusion = "IfMatch"
	// TerminatingNever never selects terminating objects.
	TerminatingNever TerminatingInclusion = "Never"
	// TerminatingDefault leaves the choice to the controller (IfMatch unless configured).
	TerminatingDefault TerminatingInclusion = "Default"
)

// SubFilter restricts what a PlacementBinding does for the clusters it binds.
//
// +kubebuilder:validation:Enum=restricted
type SubFilter string

// Sub-filters.
const (
	// Restricted applies the binding's overrides to its clusters without placing the policy there.
	Restricted SubFilter = "restricted"
)

// Kinds of the policy API group, as used in PlacementBinding subjects and dependencies.
const (
	// PolicyKind is the kind of Policy.
	PolicyKind = "Policy"
	// PolicySetKind is the kind of PolicySet.
	PolicySetKind = "PolicySet"
	// ConfigurationPolicyKind is the kind of ConfigurationPolicy.
	ConfigurationPolicyKind = "ConfigurationPolicy"
	// CertificatePolicyKind is the kind of CertificatePolicy.
	CertificatePolicyKind = "CertificatePolicy"
)

// NonEmptyString is a string of at least one character.
//
// +kubebuilder:validation:MinLength=1
type NonEmptyString string
