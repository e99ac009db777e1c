package integration

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
	"github.com/flotilla-io/flotilla/hub"
	"github.com/flotilla-io/flotilla/hub/controlplane"
	hubsearch "github.com/flotilla-io/flotilla/hub/search"
	"github.com/flotilla-io/flotilla/hub/search/store"
	"github.com/flotilla-io/flotilla/test/framework"
)

// searchBackend is a real store for the search specs, and how to make its
// database go away and come back.
type searchBackend struct {
	name string
	// open opens a new, empty index.
	open func(ctx context.Context) store.Store
	// outage makes the database unreachable until the returned func is
	// called.
	outage func(ctx context.Context) (restore func())
}

// countingStore counts, per namespace, the objects the hub applied: what
// the agents sent and the hub committed.
type countingStore struct {
	store.Store
	mu      sync.Mutex
	upserts map[string]int
	deletes int
}

func newCountingStore(s store.Store) *countingStore {
	return &countingStore{Store: s, upserts: map[string]int{}}
}

func (c *countingStore) Apply(ctx context.Context, cluster string, up []searchv1alpha1.Object, del []searchv1alpha1.ObjectRef) error {
	err := c.Store.Apply(ctx, cluster, up, del)
	if err == nil {
		c.mu.Lock()
		for _, o := range up {
			c.upserts[o.Namespace]++
		}
		c.deletes += len(del)
		c.mu.Unlock()
	}
	return err
}

func (c *countingStore) upsertsIn(ns string) func() int {
	return func() int {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.upserts[ns]
	}
}

// ingestLog keeps the body of every request to the search ingest, as the
// hub's API server received it.
type ingestLog struct {
	mu     sync.Mutex
	bodies [][]byte
	codes  map[int]int
}

func (l *ingestLog) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
		next.ServeHTTP(rec, r)
		l.mu.Lock()
		l.bodies = append(l.bodies, body)
		if l.codes == nil {
			l.codes = map[int]int{}
		}
		l.codes[rec.code]++
		l.mu.Unlock()
	})
}

func (l *ingestLog) all() [][]byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([][]byte(nil), l.bodies...)
}

func (l *ingestLog) answered(code int) func() int {
	return func() int {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.codes[code]
	}
}

type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.code = code
	r.ResponseWriter.WriteHeader(code)
}

// withSearch serves srv from the hub's API server (its ingest requests
// logged in log) and runs its cleanup in the hub's manager.
func withSearch(srv *hubsearch.Server, log *ingestLog) framework.HubOption {
	return func(cp *controlplane.Options, h *hub.Options) {
		ext := srv.Extension()
		ext.Handler = log.wrap(ext.Handler)
		cp.Extensions = append(cp.Extensions, ext)
		h.Search = srv
	}
}
