// Package policytemplate is what the hub, the agent and `flotilla policy
// test` share about policy templates, so that none of them imports
// another: the helper functions and delimiters of Go templates in policy
// templates (HelperFuncs, Delims), the hub-templates-error annotation, and
// the one strict decoding and validation of a Policy's policy templates
// (Decode), which decides what is a template-error and how it reads.
//
// Idea: a policy template is decoded once, strictly (an unknown or
// misplaced field is an error that names its path, as the API server's
// strict field validation would), and validated against what a
// ConfigurationPolicy may hold, before anyone evaluates or propagates it.
// The agent reports the error as the template's template-error, the hub as
// an event on the root policy, `policy test` as a failure naming the file;
// each reads the same words.
//
// Hub templates ({{hub ... hub}}) are resolved by HubResolver, once per
// managed cluster, before the hub copies a root Policy into that
// cluster's namespace (shared/docs/contract.md, "Policy"; OCM's
// propagator does the same), and by `flotilla policy test --hub-objects`,
// so that both resolve alike. A template is executed with the {{hub
// hub}} delimiters (managed-cluster templates pass through for the
// agent), reading only the root's namespace and, of the cluster-scoped
// objects, the cluster's own ManagedCluster, through an ObjectReader the
// caller chooses. Every resolution reports the objects it read, found or
// not (Ref), so that the caller can watch exactly those; a template that
// does not resolve is never copied half-resolved: the caller keeps it as
// written and marks it with HubTemplatesErrorAnnotation.
package policytemplate

// HubTemplatesErrorAnnotation is set by the hub on a policy template whose
// hub templates ({{hub ... hub}}) did not resolve; its value is the error.
// OCM's propagator sets the same.
const HubTemplatesErrorAnnotation = "policy.open-cluster-management.io/hub-templates-error"

// ManagedClusterDelims are the delimiters of managed-cluster templates.
var ManagedClusterDelims = NewDelims("{{", "}}")

// HubDelims are the delimiters of hub templates.
var HubDelims = NewDelims("{{hub", "hub}}")
