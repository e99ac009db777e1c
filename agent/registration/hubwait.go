package registration

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"syscall"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// After an outage the hub must find its agents' watches back within
// moments. client-go's reflectors wait longer after each failed list or
// watch, up to 30 s and twice that with jitter, and count the failures of
// a whole outage: a hub down for two minutes saw agents come back 6 to 50 s
// after it did. So a read that cannot reach the hub does not fail: it waits
// until the hub accepts connections and answers again, looking every
// hubPollInterval, and is then sent again. The reflector sees one slow list
// instead of a run of failures, and resumes at once.
const (
	// hubPollInterval is how often a waiting read looks whether the hub is back.
	hubPollInterval = 200 * time.Millisecond
	// hubWaitLimit bounds the wait of one read; after it the read fails as
	// it would have, and its caller's own retries take over.
	hubWaitLimit = 2 * time.Minute
)

// waitingTransport sends GET requests again, once the hub is back, that
// failed because the hub refused the connection or could not be reached,
// or answered 503 (an API server that is starting). Writes fail as they
// come: their callers decide.
type waitingTransport struct {
	next http.RoundTripper
	// addr is the hub's host:port, dialled to see whether it is back.
	addr string
}

func newWaitingTransport(next http.RoundTripper, addr string) http.RoundTripper {
	return &waitingTransport{next: next, addr: addr}
}

func (t *waitingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet || t.addr == "" {
		return t.next.RoundTrip(req)
	}
	ctx, cancel := context.WithTimeout(req.Context(), hubWaitLimit)
	defer cancel()
	for {
		resp, err := t.next.RoundTrip(req)
		switch {
		case err != nil && !hubUnreachable(err):
			return resp, err
		case err == nil && resp.StatusCode != http.StatusServiceUnavailable:
			return resp, nil
		}
		if !t.waitForHub(ctx) {
			return resp, err
		}
		if resp != nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
}

// waitForHub waits until the hub accepts a connection, and says whether
// it did before ctx ended.
func (t *waitingTransport) waitForHub(ctx context.Context) bool {
	d := net.Dialer{Timeout: time.Second}
	for {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(hubPollInterval):
		}
		if conn, err := d.DialContext(ctx, "tcp", t.addr); err == nil {
			conn.Close()
			return true
		}
	}
}

// hubUnreachable says whether err means the request never reached the
// hub: the connection was refused, reset before an answer, or could not
// be made.
func hubUnreachable(err error) bool {
	if utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) || errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
