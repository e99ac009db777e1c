// Package store is the search index's storage: one interface, Store, that
// the hub's search endpoint writes agents' changes to and queries, with two
// implementations (sqlite, embedded in the hub's data directory and the
// default; postgres, for large fleets and HA hubs) that pass the same
// conformance suite (storetest).
package store

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
)

// Store holds every cluster's indexed objects.
//
// Every method is safe for concurrent use. A method whose database cannot
// be reached returns an error that wraps ErrUnavailable.
type Store interface {
	// Apply writes one batch of a cluster's changes in one transaction:
	// upserts by UID (an object whose UID and resourceVersion the store
	// already holds is not written again) and deletes by UID (deleting an
	// object the store does not hold is no error).
	Apply(ctx context.Context, cluster string, upserts []searchv1alpha1.Object, deletes []searchv1alpha1.ObjectRef) error
	// Versions returns the UID and resourceVersion of every object of one
	// resource the store holds for a cluster.
	Versions(ctx context.Context, cluster string, gr schema.GroupResource) (map[types.UID]string, error)
	// DeleteCluster removes every object of a cluster.
	DeleteCluster(ctx context.Context, cluster string) error
	// Clusters returns how many objects the store holds per cluster.
	Clusters(ctx context.Context) (map[string]int64, error)
	// Query returns a page of the objects that match q, ordered by
	// cluster, namespace, name and UID.
	Query(ctx context.Context, q Query) (Page, error)
	// Ping says whether the database answers.
	Ping(ctx context.Context) error
	// Close releases the store's connections.
	Close() error
}

// ErrUnavailable is wrapped by the errors of a store whose database does
// not answer.
var ErrUnavailable = errors.New("search index unavailable")

// ErrBadContinue is wrapped by Query's error for a Continue token it did
// not issue.
var ErrBadContinue = errors.New("invalid continue token")

// Query selects objects. Every field set narrows the result (AND); a list
// matches any of its values (OR); the zero Query matches every object.
type Query struct {
	// Clusters restricts the result to these clusters: nil is every
	// cluster, and an empty, non-nil list matches nothing.
	Clusters []string
	// Groups and Resources restrict by API group ("" the core group) and
	// plural resource name; Kinds by kind, matched without regard to case.
	Groups    []string
	Resources []string
	Kinds     []string
	// Namespaces and Names match exactly.
	Namespaces []string
	Names      []string
	// NameContains matches names that contain it, without regard to case.
	NameContains string
	// Images matches objects one of whose images contains one of them.
	Images []string
	// Statuses match Object.Status exactly.
	Statuses []string
	// OwnerKind and OwnerName match the controller's kind (without regard
	// to case) and name; either may be empty.
	OwnerKind string
	OwnerName string
	// Labels is a label selector's requirements (=, !=, in, notin,
	// exists, !exists).
	Labels labels.Requirements
	// Fields match Object.Fields exactly, by path; the paths
	// metadata.name and metadata.namespace match the name and namespace.
	Fields map[string]string
	// Limit is the page size; 0 means DefaultLimit. Continue is the token
	// of the previous page.
	Limit    int
	Continue string
}

// DefaultLimit is a page's size when Query.Limit is 0; MaxLimit the
// largest page a store returns.
const (
	DefaultLimit = 500
	MaxLimit     = 5000
)

// Page is one page of a query's result.
type Page struct {
	Items []searchv1alpha1.SearchItem
	// Continue asks for the next page; empty on the last one.
	Continue string
}
