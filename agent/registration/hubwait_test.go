package registration

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// TestWaitingTransport checks that a read sent while the hub refuses
// connections is answered once the hub listens again and says it is ready,
// and that a write fails at once.
func TestWaitingTransport(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // the hub is down: connections are refused

	refused := make(chan struct{}, 100)
	rt := newWaitingTransport(roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			refused <- struct{}{}
		}
		return resp, err
	}), "http://"+addr)
	post, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/", http.NoBody)
	if _, err := rt.RoundTrip(post); err == nil || !hubUnreachable(err) {
		t.Fatalf("a POST to a hub that is down: err %v, want connection refused at once", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/", nil)
		resp, err := rt.RoundTrip(req)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(body) != "back" {
				err = io.ErrUnexpectedEOF
			}
		}
		got <- err
	}()
	<-refused // the POST's
	<-refused // the GET's: it was sent while the hub was down
	// The hub comes back on the same address: the waiting GET is answered.
	var back net.Listener
	for back == nil {
		if back, err = net.Listen("tcp", addr); err != nil {
			back = nil
			time.Sleep(10 * time.Millisecond) // the port may linger for a moment
		}
	}
	// It says it is not ready twice before it is: the GET waits for that.
	var readyz atomic.Int32
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/readyz" {
			if readyz.Add(1) <= 2 {
				w.WriteHeader(http.StatusInternalServerError)
			}
			return
		}
		if readyz.Load() <= 2 {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		_, _ = io.WriteString(w, "back")
	})}
	go func() { _ = srv.Serve(back) }()
	defer srv.Close()
	if err := <-got; err != nil {
		t.Fatalf("the GET sent while the hub was down: %v, want the answer of the hub once back", err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
