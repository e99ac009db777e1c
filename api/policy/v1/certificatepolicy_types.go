package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CertificatePolicy checks the certificates held in Secrets of the selected namespaces of a
// managed cluster: that each expires late enough, lives no longer than allowed, and names only
// the subject alternative names allowed. It only informs. It runs on the spoke, usually
// delivered inside a Policy's policy-templates.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Compliance state",type="string",JSONPath=".status.compliant"
// +kubebuilder:metadata:labels="policy.open-cluster-management.io/policy-type=template"
type CertificatePolicy struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec says which certificates are checked, and against what.
	// +optional
	Spec CertificatePolicySpec `json:"spec,omitzero"`
	// status is the compliance found at the last evaluation.
	// +optional
	Status CertificatePolicyStatus `json:"status,omitzero"`
}

// CertificatePolicySpec selects the Secrets whose certificates are checked and the limits they
// are checked against. Durations are Go durations (300h, 1h30m).
type CertificatePolicySpec struct {
	// remediationAction is inform or enforce; either only reports, as certificates are not
	// changed by a policy.
	// +kubebuilder:validation:Enum=Inform;inform;Enforce;enforce
	// +optional
	RemediationAction RemediationAction `json:"remediationAction,omitempty"`
	// severity of a violation: low, medium, high or critical.
	// +optional
	Severity Severity `json:"severity,omitempty"`
	// namespaceSelector selects the namespaces whose Secrets are checked; with neither include
	// nor labels no namespace is selected.
	// +optional
	NamespaceSelector CertificateNamespaceSelector `json:"namespaceSelector,omitzero"`
	// labelSelector restricts the checked Secrets to those with all of these labels.
	// +optional
	LabelSelector map[string]NonEmptyString `json:"labelSelector,omitempty"`
	// minimumDuration is the least time a certificate may have left before it expires; 672h
	// when unset.
	// +kubebuilder:validation:Type=string
	// +optional
	MinimumDuration *metav1.Duration `json:"minimumDuration,omitempty"`
	// minimumCADuration is minimumDuration for CA certificates; minimumDuration when unset.
	// +kubebuilder:validation:Type=string
	// +optional
	MinimumCADuration *metav1.Duration `json:"minimumCADuration,omitempty"`
	// maximumDuration is the longest a certificate may be valid for (notAfter - notBefore).
	// +kubebuilder:validation:Type=string
	// +optional
	MaximumDuration *metav1.Duration `json:"maximumDuration,omitempty"`
	// maximumCADuration is maximumDuration for CA certificates; maximumDuration when unset.
	// +kubebuilder:validation:Type=string
	// +optional
	MaximumCADuration *metav1.Duration `json:"maximumCADuration,omitempty"`
	// allowedSANPattern is a Go regular expression every DNS SAN of a certificate must match.
	// +kubebuilder:validation:MinLength=1
	// +optional
	AllowedSANPattern string `json:"allowedSANPattern,omitempty"`
	// disallowedSANPattern is a Go regular expression no DNS SAN of a certificate may match.
	// +kubebuilder:validation:MinLength=1
	// +optional
	DisallowedSANPattern string `json:"disallowedSANPattern,omitempty"`
}

// CertificateNamespaceSelector selects namespaces by name globs and labels; all rules are ANDed.
// With labels but no include, include behaves as ["*"].
//
// +structType=atomic
type CertificateNamespaceSelector struct {
	// include are filepath globs of namespace names to select.
	// +optional
	Include []NonEmptyString `json:"include,omitempty"`
	// exclude are filepath globs of namespace names to leave out.
	// +optional
	Exclude []NonEmptyString `json:"exclude,omitempty"`
	// matchLabels selects namespaces with all of these labels.
	// +optional
	MatchLabels map[string]string `json:"matchLabels,omitempty"`
	// matchExpressions selects namespaces matching all of these label requirements.
	// +listType=atomic
	// +optional
	MatchExpressions []metav1.LabelSelectorRequirement `json:"matchExpressions,omitempty"`
}

// CertificatePolicyStatus is the compliance of a CertificatePolicy, per namespace.
type CertificatePolicyStatus struct {
	// compliant is Compliant or NonCompliant.
	// +optional
	ComplianceState ComplianceState `json:"compliant,omitempty"`
	// compliancyDetails are, per selected namespace, the certificates that violate the policy.
	// +optional
	CompliancyDetails map[string]CertificateCompliancyDetails `json:"compliancyDetails,omitempty"`
}

// CertificateCompliancyDetails are the certificates of one namespace that violate the policy.
type CertificateCompliancyDetails struct {
	// NonCompliantCertificates is how many certificates violate the policy.
	// +optional
	NonCompliantCertificates uint `json:"NonCompliantCertificates,omitempty"`
	// NonCompliantCertificatesList holds each violating certificate by its name.
	// +optional
	NonCompliantCertificatesList map[string]Certificate `json:"NonCompliantCertificatesList,omitempty"`
	// message says how the namespace stands.
	// +optional
	Message string `json:"message,omitempty"`
}

// Certificate is a certificate found in a Secret.
type Certificate struct {
	// secretName is the Secret holding the certificate.
	// +optional
	Secret string `json:"secretName,omitempty"`
	// expiration is when the certificate expires, in RFC 3339.
	// +optional
	Expiration string `json:"expiration,omitempty"`
	// expiry is the time left until expiration, in nanoseconds.
	// +optional
	Expiry int64 `json:"expiry,omitempty"`
	// ca says whether the certificate is a CA's.
	// +optional
	CA bool `json:"ca,omitempty"`
	// duration is how long the certificate is valid for (notAfter - notBefore), in nanoseconds.
	// +optional
	Duration int64 `json:"duration,omitempty"`
	// sans are the certificate's DNS subject alternative names.
	// +listType=atomic
	// +optional
	Sans []string `json:"sans,omitempty"`
}

// CertificatePolicyList is a list of CertificatePolicies.
//
// +kubebuilder:object:root=true
type CertificatePolicyList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the CertificatePolicies.
	Items []CertificatePolicy `json:"items"`
}

func init() { objects = append(objects, &CertificatePolicy{}, &CertificatePolicyList{}) }
