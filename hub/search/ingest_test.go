package search

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
	"github.com/flotilla-io/flotilla/hub/search/store"
	"github.com/flotilla-io/flotilla/internal/search"
)

// memStore holds rows in memory for the handler's unit tests; the
// integration specs use the real stores.
type memStore struct {
	mu      sync.Mutex
	rows    map[string]map[types.UID]searchv1alpha1.Object
	down    bool
	blocked chan struct{}
}

func newMemStore() *memStore {
	return &memStore{rows: map[string]map[types.UID]searchv1alpha1.Object{}}
}

func (m *memStore) Apply(ctx context.Context, c string, up []searchv1alpha1.Object, del []searchv1alpha1.ObjectRef) error {
	if m.blocked != nil {
		<-m.blocked
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return fmt.Errorf("apply: %w", store.ErrUnavailable)
	}
	if m.rows[c] == nil {
		m.rows[c] = map[types.UID]searchv1alpha1.Object{}
	}
	for _, o := range up {
		m.rows[c][o.UID] = o
	}
	for _, d := range del {
		delete(m.rows[c], d.UID)
	}
	return nil
}

func (m *memStore) Versions(ctx context.Context, c string, gr schema.GroupResource) (map[types.UID]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[types.UID]string{}
	for uid, o := range m.rows[c] {
		if o.Group == gr.Group && o.Resource == gr.Resource {
			out[uid] = o.ResourceVersion
		}
	}
	return out, nil
}

func (m *memStore) DeleteCluster(ctx context.Context, c string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.rows, c)
	return nil
}

func (m *memStore) Clusters(ctx context.Context) (map[string]int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]int64{}
	for c, rows := range m.rows {
		out[c] = int64(len(rows))
	}
	return out, nil
}

func (m *memStore) Query(ctx context.Context, q store.Query) (store.Page, error) {
	return store.Page{}, errors.New("not used")
}
func (m *memStore) Ping(ctx context.Context) error { return nil }
func (m *memStore) Close() error                   { return nil }

func post(t *testing.T, h http.Handler, cluster string, b any) *httptest.ResponseRecorder {
	t.Helper()
	body, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodPost, search.ChangesPath(cluster), bytes.NewReader(body))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func pod(uid, rv string) searchv1alpha1.Object {
	return searchv1alpha1.Object{Version: "v1", Resource: "pods", Kind: "Pod", Namespace: "default", Name: "p-" + uid, UID: types.UID(uid), ResourceVersion: rv}
}

func TestIngestAppliesAndAcknowledges(t *testing.T) {
	m := newMemStore()
	s := New(m, Options{})
	w := post(t, s, "c1", searchv1alpha1.ChangeBatch{Seq: 3, Upserts: []searchv1alpha1.Object{pod("a", "1"), pod("b", "1")}})
	var ack searchv1alpha1.ChangeAck
	if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &ack) != nil || ack.Seq != 3 {
		t.Fatalf("answer %d %s, want 200 and seq 3", w.Code, w.Body)
	}
	post(t, s, "c1", searchv1alpha1.ChangeBatch{Seq: 4, Deletes: []searchv1alpha1.ObjectRef{{Resource: "pods", UID: "a"}}})

	r := httptest.NewRequest(http.MethodGet, search.VersionsPath("c1")+"?resource=pods", nil)
	w = httptest.NewRecorder()
	s.ServeHTTP(w, r)
	var v searchv1alpha1.ObjectVersions
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil || len(v.Versions) != 1 || v.Versions["b"] != "1" {
		t.Errorf("versions %d %s, want b at 1 only", w.Code, w.Body)
	}
}

func TestIngestRefusesBadBatches(t *testing.T) {
	s := New(newMemStore(), Options{})
	noUID := pod("", "1")
	tooMany := make([]searchv1alpha1.ObjectRef, MaxBatchObjects+1)
	for i := range tooMany {
		tooMany[i] = searchv1alpha1.ObjectRef{Resource: "pods", UID: types.UID(fmt.Sprint(i))}
	}
	for _, tc := range []struct {
		name string
		body any
		code int
		says string
	}{
		{"no uid", searchv1alpha1.ChangeBatch{Upserts: []searchv1alpha1.Object{noUID}}, http.StatusBadRequest, "upserts[0] (Pod p-): uid is required"},
		{"no resource", searchv1alpha1.ChangeBatch{Deletes: []searchv1alpha1.ObjectRef{{UID: "x"}}}, http.StatusBadRequest, "deletes[0]: uid and resource are required"},
		{"not json", "{", http.StatusBadRequest, "not a ChangeBatch"},
		{"too many", searchv1alpha1.ChangeBatch{Deletes: tooMany}, http.StatusRequestEntityTooLarge, "at most 1000 objects"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := post(t, s, "c1", tc.body)
			if w.Code != tc.code || !strings.Contains(w.Body.String(), tc.says) {
				t.Errorf("answer %d %s, want %d saying %q", w.Code, w.Body, tc.code, tc.says)
			}
		})
	}
}

func TestIngestBackPressureAndUnavailable(t *testing.T) {
	m := newMemStore()
	m.blocked = make(chan struct{})
	s := New(m, Options{MaxInFlight: 1})
	done := make(chan struct{})
	go func() {
		defer close(done)
		post(t, s, "c1", searchv1alpha1.ChangeBatch{Seq: 1, Upserts: []searchv1alpha1.Object{pod("a", "1")}})
	}()
	// The first batch holds the one slot until the store answers.
	for len(s.inflight) == 0 {
		select {
		case <-done:
			t.Fatal("the first batch returned before the store answered")
		default:
		}
	}
	w := post(t, s, "c1", searchv1alpha1.ChangeBatch{Seq: 2, Upserts: []searchv1alpha1.Object{pod("b", "1")}})
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" {
		t.Errorf("second batch in flight: %d (Retry-After %q), want 429 with Retry-After", w.Code, w.Header().Get("Retry-After"))
	}
	close(m.blocked)
	<-done
	m.blocked = nil

	m.down = true
	w = post(t, s, "c1", searchv1alpha1.ChangeBatch{Seq: 3, Upserts: []searchv1alpha1.Object{pod("c", "1")}})
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" || !strings.Contains(w.Body.String(), "search index unavailable") {
		t.Errorf("store down: %d (Retry-After %q) %s, want 503 with Retry-After", w.Code, w.Header().Get("Retry-After"), w.Body)
	}
}
