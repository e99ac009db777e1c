package search

import (
	"context"
	"net/http"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"sigs.k8s.io/controller-runtime/pkg/client"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
	"github.com/flotilla-io/flotilla/hub/controlplane"
	"github.com/flotilla-io/flotilla/hub/search/query"
	"github.com/flotilla-io/flotilla/hub/search/store"
	"github.com/flotilla-io/flotilla/internal/search"
)

// DefaultMaxInFlight is how many batches the hub applies at once when
// Options leave it unset: one per store connection it keeps busy, more
// only queue in the database.
const DefaultMaxInFlight = 8

// Options configure a Server.
type Options struct {
	// MaxInFlight bounds the batches applied at once; past it, ingest
	// answers 429. 0 means DefaultMaxInFlight.
	MaxInFlight int
}

// Server is the hub's search endpoint over one store.
type Server struct {
	store    store.Store
	inflight chan struct{}

	mu sync.RWMutex
	// query is hub/search/query's handler, made once the API server hands
	// its authorizer to the extension.
	query http.Handler
	// config reads the SearchConfig once the hub's manager runs (Setup).
	config client.Reader
}

// New returns the search endpoint over s.
func New(s store.Store, opts Options) *Server {
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = DefaultMaxInFlight
	}
	return &Server{store: s, inflight: make(chan struct{}, opts.MaxInFlight)}
}

// Store is the index the server writes and reads.
func (s *Server) Store() store.Store { return s.store }

// Extension serves s from the hub's embedded API server.
func (s *Server) Extension() controlplane.Extension {
	return controlplane.Extension{
		Prefix:  search.Prefix,
		Handler: s,
		Serves:  serves,
		Authorizer: func(next authorizer.Authorizer) authorizer.Authorizer {
			s.mu.Lock()
			// The last server of the chain to hand its authorizer over is
			// the outermost, whose chain serves the extension.
			s.query = query.New(s.store, next, query.WithResources(s.resources))
			s.mu.Unlock()
			return Authorizer(next)
		},
	}
}

// serves says which paths of the group are the extension's: the others
// (searchconfigs) are the API server's custom resources.
func serves(r *http.Request) bool {
	p := r.URL.Path
	return strings.HasPrefix(p, search.IngestPrefix) || p == search.SearchPath ||
		strings.HasPrefix(p, search.ResourcesPrefix) || p+"/" == search.ResourcesPrefix
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if cluster, endpoint, ok := search.ParseIngestPath(r.URL.Path); ok {
		switch endpoint {
		case "changes":
			s.changes(w, r, cluster)
		case "versions":
			s.versions(w, r, cluster)
		}
		return
	}
	if strings.HasPrefix(r.URL.Path, search.IngestPrefix) {
		fail(w, r, notFound("the ingest paths are "+search.IngestPrefix+"<cluster>/changes and "+search.IngestPrefix+"<cluster>/versions"))
		return
	}
	s.mu.RLock()
	q := s.query
	s.mu.RUnlock()
	if q == nil {
		http.NotFound(w, r)
		return
	}
	q.ServeHTTP(w, r)
}

// resources are what the agents index: SearchConfig default's list, or
// DefaultResources without it.
func (s *Server) resources(ctx context.Context) ([]searchv1alpha1.SearchResource, error) {
	s.mu.RLock()
	c := s.config
	s.mu.RUnlock()
	if c == nil {
		return searchv1alpha1.DefaultResources, nil
	}
	var sc searchv1alpha1.SearchConfig
	if err := c.Get(ctx, types.NamespacedName{Name: searchv1alpha1.DefaultConfigName}, &sc); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return searchv1alpha1.DefaultResources, nil
		}
		return nil, err
	}
	return sc.Spec.Resources, nil
}
