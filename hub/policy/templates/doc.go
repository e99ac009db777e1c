// Package templates is the propagator's name for the resolution of hub
// templates ({{hub ... hub}}) in the policy templates of a root Policy,
// once per managed cluster, before the hub copies the Policy into that
// cluster's namespace (shared/docs/contract.md, "Policy"; OCM's
// governance-policy-propagator does the same). The resolver itself is
// policytemplate.HubResolver, shared with `flotilla policy test
// --hub-objects`, so that both resolve alike.
//
// Idea: a policy template's objectDefinition is turned into YAML, executed
// as a Go template whose delimiters are {{hub and hub}} (managed-cluster
// templates, {{ }}, pass through untouched for the agent), and turned back
// into JSON. The data are .ManagedClusterName, .ManagedClusterLabels and
// .PolicyMetadata (name, namespace, labels, annotations of the root); the
// functions are those of OCM's template library (policytemplate.HelperFuncs
// and policytemplate.ReadFuncs), reading only the root Policy's namespace
// and, of the cluster-scoped objects, the cluster's own ManagedCluster
// (anything else is an error that says so).
//
// Objects are read through a Reader, so that the caller decides how (the
// propagator reads the API server directly, once per object per
// reconcile, and caches no Secret). Every resolution reports the objects
// it read, found or not, so that the caller can watch exactly those and
// resolve again when one changes.
//
// A template that does not resolve is never copied half-resolved: Resolve
// returns the error, worded as OCM does ("failed to resolve the template
// {...}: ..."), and the caller keeps the template as written and marks it
// with HubTemplatesErrorAnnotation, which the agent reports as a
// template-error.
package templates
