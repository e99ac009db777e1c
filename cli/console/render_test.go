package console

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// streamWriter hands each write of an event stream to a channel and runs
// onFlush at every flush, the moment the page hears the stream.
type streamWriter struct {
	header  http.Header
	writes  chan string
	onFlush func()
}

func (w *streamWriter) Header() http.Header         { return w.header }
func (w *streamWriter) WriteHeader(int)             {}
func (w *streamWriter) Write(p []byte) (int, error) { w.writes <- string(p); return len(p), nil }
func (w *streamWriter) Flush()                      { w.onFlush() }

// A change the hub makes as the page's stream opens reaches the page: the
// page fetched its view before, and would otherwise show it stale until
// the next change (the browser spec once waited two minutes for a policy
// cell that had changed in that gap).
func TestEventsStreamMissesNoChangeAtOpen(t *testing.T) {
	s := testServer(t)
	w := &streamWriter{header: http.Header{}, writes: make(chan string, 16)}
	first := true
	w.onFlush = func() {
		if first {
			first = false
			s.notify.changed()
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.serveEvents(w, httptest.NewRequest("GET", "/events", nil).WithContext(ctx))
	}()
	defer func() { cancel(); <-done }()

	deadline := time.After(10 * time.Second)
	for {
		select {
		case chunk := <-w.writes:
			if strings.Contains(chunk, "event: change") {
				return
			}
		case <-deadline:
			t.Fatal("no change event for a change made as the stream opened")
		}
	}
}
