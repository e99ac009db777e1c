// Package addon holds what the hub's add-on manager, its template add-ons
// and the agent's add-on registration share about OCM's add-ons
// (addon.open-cluster-management.io; the contract is docs/addons.md): the
// well-known names, labels, annotations, condition types and reasons, the
// default identity of an add-on's agent, and the spec hash of a config.
package addon
