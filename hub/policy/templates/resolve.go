package templates

import (
	"github.com/flotilla-io/flotilla/internal/policytemplate"
)

// HubTemplatesErrorAnnotation is set on a policy template whose hub
// templates did not resolve; its value is the error. OCM uses the same
// annotation, and its agents report it as a template-error.
const HubTemplatesErrorAnnotation = policytemplate.HubTemplatesErrorAnnotation

// Ref is an object a resolution read, found or not.
type Ref = policytemplate.Ref

// Reader reads the objects hub templates refer to.
type Reader = policytemplate.ObjectReader

// Data are what a hub template sees as ".".
type Data = policytemplate.HubData

// Resolver resolves the hub templates of one root policy.
type Resolver = policytemplate.HubResolver

// Has reports whether raw holds hub templates.
func Has(raw []byte) bool { return policytemplate.HasHubTemplates(raw) }
