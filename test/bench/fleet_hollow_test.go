package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"
)

// TestReadWatchEvent checks that a watch stream is read one event at a
// time: events longer than the reader's buffer, and an event split over
// lines by whitespace, included.
func TestReadWatchEvent(t *testing.T) {
	long := strings.Repeat("x", 2000)
	stream := `{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"1"}}}` + "\n" +
		`{"type":"MODIFIED","object":{"metadata":{"name":"` + long + `","resourceVersion":"2"}}}` + "\n" +
		`{"type":"BOOKMARK",` + "\n" + `"object":{"metadata":{"resourceVersion":"3"}}}` + "\n"
	want := []struct {
		typ  watch.EventType
		name string
		rv   string
	}{{watch.Added, "a", "1"}, {watch.Modified, long, "2"}, {watch.Bookmark, "", "3"}}
	r := bufio.NewReaderSize(strings.NewReader(stream), 512)
	for i, w := range want {
		buf, err := readWatchEvent(r)
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		var ev hollowWatchEvent
		if err := json.Unmarshal(buf.Bytes(), &ev); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		putEventBuffer(buf)
		var o hollowObject
		if err := json.Unmarshal(ev.Object, &o); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if ev.Type != w.typ || o.Metadata.Name != w.name || o.Metadata.ResourceVersion != w.rv {
			t.Errorf("event %d: got %s %.10q %s, want %s %.10q %s", i, ev.Type, o.Metadata.Name, o.Metadata.ResourceVersion, w.typ, w.name, w.rv)
		}
	}
	if _, err := readWatchEvent(r); err != io.EOF {
		t.Errorf("after the last event: got %v, want EOF", err)
	}
}

// TestRetryAfter checks which answers of the hub are sent again, and
// after how long: as client-go, a 429 or 5xx that says Retry-After.
func TestRetryAfter(t *testing.T) {
	for _, c := range []struct {
		code   int
		header string
		want   time.Duration
		ok     bool
	}{
		{http.StatusTooManyRequests, "1", time.Second, true},
		{http.StatusServiceUnavailable, "3", 3 * time.Second, true},
		{http.StatusTooManyRequests, "", 0, false},
		{http.StatusConflict, "1", 0, false},
		{http.StatusOK, "1", 0, false},
	} {
		resp := &http.Response{StatusCode: c.code, Header: http.Header{}}
		if c.header != "" {
			resp.Header.Set("Retry-After", c.header)
		}
		if got, ok := retryAfter(resp); got != c.want || ok != c.ok {
			t.Errorf("%d Retry-After %q: got %s %v, want %s %v", c.code, c.header, got, ok, c.want, c.ok)
		}
	}
}
