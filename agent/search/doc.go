// Package search is the agent's collector for the hub's search index
// (hub/search): it keeps informers of its cluster's objects of the kinds
// the hub's SearchConfig "default" lists (DefaultResources without it),
// reduces each object to a compact searchv1alpha1.Object (identity,
// labels, controller, images, a one-word status, conditions, a few
// fields) and streams the changes to the hub's ingest endpoint.
//
// It watches: the hub's SearchConfig named default (get, list and watch,
// which the hub grants every accepted agent), and on its cluster the
// resources configured, with metadata-only informers for Secrets,
// ConfigMaps and every resource marked metadataOnly: neither their data
// nor its keys ever reach the agent's memory, let alone the hub.
//
// It writes: ChangeBatches to ingest/<cluster>/changes, one at a time,
// with the pending changes coalesced per UID (the last state of an object
// wins), so that its memory is bounded by its cluster's object count and
// not by how fast objects change. A batch the hub refuses with 429 or 503
// is sent again after a backoff. At each start it reads
// ingest/<cluster>/versions per resource and sends only the difference.
package search
