package registration

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// After an outage the hub must find its agents' watches back within
// moments. client-go's reflectors wait longer after each failed list or
// watch, up to 30 s and twice that with jitter, and count the failures of
// a whole outage: a hub down for two minutes saw agents come back 6 to 50 s
// after it did. So a read that cannot reach the hub does not fail: it waits
// until the hub accepts connections and says it is ready (/readyz), looking
// every hubPollInterval, and is then sent again. A hub's API server accepts
// connections a moment before its authorizers and its custom resources are
// ready: a read sent then is refused (403) or misses the resource (404),
// and each such failure would step the reflector's backoff all the same. The reflector sees one slow list
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
	// readyz is the hub's readiness URL, asked once it accepts connections.
	readyz string
	// dial, when set, dials addr (trying the hub's other addresses too).
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// newWaitingTransport returns a transport that waits for the hub at server
// (an https URL) when it cannot be reached; nil when server has no address.
func newWaitingTransport(next http.RoundTripper, server string) *waitingTransport {
	t := &waitingTransport{next: next, addr: hubAddress(server)}
	if u, err := url.Parse(server); err == nil && t.addr != "" {
		u.Path, u.RawQuery = strings.TrimSuffix(u.Path, "/")+"/readyz", ""
		t.readyz = u.String()
	}
	return t
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
	dial := (&net.Dialer{Timeout: time.Second}).DialContext
	if t.dial != nil {
		dial = t.dial
	}
	for {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(hubPollInterval):
		}
		conn, err := dial(ctx, "tcp", t.addr)
		if err != nil {
			continue
		}
		conn.Close()
		if t.ready(ctx) {
			return true
		}
	}
}

// ready says whether the hub answers that it is ready. A hub that does not
// let the agent read /readyz (401, 403, 404) counts as ready: the request
// itself will tell.
func (t *waitingTransport) ready(ctx context.Context) bool {
	if t.readyz == "" {
		return true
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.readyz, nil)
	if err != nil {
		return true
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
		return true
	}
	return false
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
