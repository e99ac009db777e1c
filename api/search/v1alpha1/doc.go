// Package v1alpha1 holds the search.flotilla.io/v1alpha1 API types: the
// fleet-wide search index.
//
// SearchConfig is a hub object: which resource kinds every cluster's agent
// indexes. The other types are not stored in etcd. Object, ChangeBatch,
// ChangeAck and ObjectVersions are what an agent and the hub's search
// endpoint exchange (under /apis/search.flotilla.io/v1alpha1/ingest/<cluster>/),
// and SearchResult is what a query returns.
//
// +kubebuilder:object:generate=true
// +groupName=search.flotilla.io
package v1alpha1
