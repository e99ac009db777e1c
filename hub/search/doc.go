// Package search is the hub's side of multi-cluster search: the API
// server extension that serves search.flotilla.io/v1alpha1's ingest and
// query paths from the embedded API server, behind its authentication
// and authorization, and the index it writes and reads (store).
//
// It owns the ingest endpoint: each cluster's agent (agent/search) posts
// ChangeBatches to ingest/<cluster>/changes and reads what the index
// holds at ingest/<cluster>/versions; only that cluster's accepted agent
// may (Authorizer). A bounded number of batches is applied at once, and
// a batch past it is answered 429 with Retry-After; a database that does
// not answer is 503 with Retry-After, and the agent keeps its changes.
// The query paths (search, resources/) are hub/search/query's.
//
// It watches ManagedClusters: a deleted cluster's rows are deleted, and
// at the start those of every cluster the hub no longer has (Cleanup).
// It writes nothing to the API server.
package search
