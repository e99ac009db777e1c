// Package policykinds says which kinds of policy templates Flotilla
// evaluates, for the hub, the agent and `flotilla policy test` alike:
// ConfigurationPolicy and CertificatePolicy
// (policy.open-cluster-management.io/v1), and Gatekeeper's
// ConstraintTemplates (templates.gatekeeper.sh) and constraints
// (constraints.gatekeeper.sh), which the agent applies and whose audit
// results it reports, as OCM's framework does. Any other kind is a
// template-error whose message lists these.
package policykinds

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	"github.com/flotilla-io/flotilla/internal/policytemplate"
)

const (
	// GatekeeperTemplatesGroup is the group of Gatekeeper's ConstraintTemplate.
	GatekeeperTemplatesGroup = "templates.gatekeeper.sh"
	// ConstraintTemplateKind is the kind of Gatekeeper's ConstraintTemplate.
	ConstraintTemplateKind = "ConstraintTemplate"
	// GatekeeperConstraintsGroup is the group of every Gatekeeper constraint
	// kind (one per ConstraintTemplate).
	GatekeeperConstraintsGroup = "constraints.gatekeeper.sh"
)

// IsGatekeeper says whether gvk is a Gatekeeper ConstraintTemplate or constraint.
func IsGatekeeper(gvk schema.GroupVersionKind) bool {
	return (gvk.Group == GatekeeperTemplatesGroup && gvk.Kind == ConstraintTemplateKind) || gvk.Group == GatekeeperConstraintsGroup
}

// IsCertificatePolicy says whether kind and apiVersion are CertificatePolicy's.
func IsCertificatePolicy(kind, apiVersion string) bool {
	return kind == policyv1.CertificatePolicyKind && apiVersion == policyv1.GroupVersion.String()
}

// Other says whether a decoded template is of a kind evaluated besides
// ConfigurationPolicy: policytemplate.Decode reports those as not
// supported, and their own decoding takes them over.
func Other(t policytemplate.Template) bool {
	if t.Err == nil || t.HubTemplateError || t.Name == "" || t.Kind == "" {
		return false
	}
	gv, err := schema.ParseGroupVersion(t.APIVersion)
	return err == nil && (IsCertificatePolicy(t.Kind, t.APIVersion) || IsGatekeeper(gv.WithKind(t.Kind)))
}

// Unsupported says whether a decoded template is of a kind Flotilla does
// not evaluate at all.
func Unsupported(t policytemplate.Template) bool {
	return t.Err != nil && !t.HubTemplateError && t.Name != "" && t.Kind != "" && t.APIVersion != "" &&
		!(t.Kind == policyv1.ConfigurationPolicyKind && t.APIVersion == policyv1.GroupVersion.String()) && !Other(t)
}

// UnsupportedError is the template-error of a kind Flotilla does not
// evaluate, naming those it does.
func UnsupportedError(t policytemplate.Template) error {
	return fmt.Errorf("policy templates of kind %s (%s) are not supported: Flotilla evaluates ConfigurationPolicy and CertificatePolicy (%s), "+
		"and Gatekeeper's ConstraintTemplate (%s) and constraints (%s)",
		t.Kind, t.APIVersion, policyv1.GroupVersion.String(), GatekeeperTemplatesGroup, GatekeeperConstraintsGroup)
}
