package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// hollowClient is one hollow agent's connection to the hub: a single
// HTTP/2 connection over its own TLS session, with its own client
// certificate (or the bootstrap token while it joins), that carries all
// its requests and watches, and the few REST verbs the agent uses with
// JSON bodies. client-go's clients would cost more than the connection
// itself at 10,000 clusters: a codec factory, rate limiter and REST
// client per group, and an entry in client-go's transport cache with the
// certificate and key in PEM, per cluster.
type hollowClient struct {
	host, token string
	transport   *http2.Transport
	http        *http.Client
}

// newHollowClient connects as cert, or with token when cert is nil, to
// the hub of tlsConfig (which holds the hub's CA).
func newHollowClient(host string, tlsConfig *tls.Config, cert *tls.Certificate, token string) *hollowClient {
	cfg := tlsConfig.Clone()
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	t := &http2.Transport{
		TLSClientConfig: cfg,
		// The smallest frame HTTP/2 allows: the connection's read buffer
		// grows to the largest frame the hub sends (up to 1 MiB by default).
		MaxReadFrameSize: 16 << 10,
		// No HPACK dynamic tables (the smallest size HTTP/2 allows fits
		// no header): two 4 KiB tables per connection, with their
		// indexes, came to 15 KiB per cluster. The headers go as
		// literals; the requests are the same.
		MaxDecoderHeaderTableSize: 1,
		MaxEncoderHeaderTableSize: 1,
		// As client-go: ping a connection idle for 30 s, and drop it when
		// the ping is not answered within 15 s.
		ReadIdleTimeout: 30 * time.Second,
		PingTimeout:     15 * time.Second,
	}
	return &hollowClient{host: host, token: token, transport: t, http: &http.Client{Transport: t}}
}

// close closes the client's connection once its requests are done.
func (c *hollowClient) close() { c.transport.CloseIdleConnections() }

// hubPath is the path of a resource (name "" for the collection,
// namespace "" for a cluster-scoped one), and of its subresource.
func hubPath(gv schema.GroupVersion, namespace, resource, name, subresource string) string {
	p := "/apis/" + gv.Group + "/" + gv.Version
	if gv.Group == "" {
		p = "/api/" + gv.Version
	}
	if namespace != "" {
		p += "/namespaces/" + namespace
	}
	p += "/" + resource
	if name != "" {
		p += "/" + name
	}
	if subresource != "" {
		p += "/" + subresource
	}
	return p
}

// hollowMaxRetries is how often a request the hub asks to retry later is
// sent again, as client-go's.
const hollowMaxRetries = 10

// send sends a request. As client-go does, a request the hub asks to
// retry later (429, or a 5xx with Retry-After: its flow control, most
// often, when thousands of agents start at once) is sent again after the
// seconds it says, up to hollowMaxRetries times.
func (c *hollowClient) send(ctx context.Context, method, path string, query url.Values, contentType string, body []byte) (*http.Response, error) {
	u := c.host + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	for retries := 0; ; retries++ {
		var r io.Reader
		if body != nil {
			r = bytes.NewReader(body)
		}
		req, err := http.NewRequestWithContext(ctx, method, u, r)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "application/json")
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		resp, err := c.http.Do(req)
		if err != nil {
			return nil, err
		}
		wait, ok := retryAfter(resp)
		if !ok || retries == hollowMaxRetries {
			return resp, nil
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// retryAfter is how long the hub asks to wait before resp's request is
// sent again; false when it does not ask.
func retryAfter(resp *http.Response) (time.Duration, bool) {
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode/100 != 5 {
		return 0, false
	}
	seconds, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	if err != nil || seconds < 0 {
		return 0, false
	}
	return time.Duration(seconds) * time.Second, true
}

// do sends a request, with body encoded as JSON when it is not nil, and
// decodes a successful response into into when it is not nil. A refusal
// is returned as the API error the hub sent (apierrors.IsNotFound …).
func (c *hollowClient) do(ctx context.Context, method, path string, query url.Values, contentType string, body, into any) error {
	var data []byte
	if raw, ok := body.([]byte); ok {
		data = raw
	} else if body != nil {
		var err error
		if data, err = json.Marshal(body); err != nil {
			return err
		}
	}
	if data != nil && contentType == "" {
		contentType = "application/json"
	}
	resp, err := c.send(ctx, method, path, query, contentType, data)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return statusError(method, path, resp.StatusCode, out)
	}
	if into == nil {
		return nil
	}
	return json.Unmarshal(out, into)
}

func (c *hollowClient) get(ctx context.Context, path string, query url.Values, into any) error {
	return c.do(ctx, http.MethodGet, path, query, "", nil, into)
}

func (c *hollowClient) create(ctx context.Context, path string, obj, into any) error {
	return c.do(ctx, http.MethodPost, path, nil, "", obj, into)
}

func (c *hollowClient) update(ctx context.Context, path string, obj, into any) error {
	return c.do(ctx, http.MethodPut, path, nil, "", obj, into)
}

// mergePatch sends a JSON merge patch (client.MergeFrom(…).Data).
func (c *hollowClient) mergePatch(ctx context.Context, path string, patch []byte, into any) error {
	return c.do(ctx, http.MethodPatch, path, nil, "application/merge-patch+json", patch, into)
}

// watch opens a watch of what query selects at path; the caller reads
// the events from the body and closes it.
func (c *hollowClient) watch(ctx context.Context, path string, query url.Values) (io.ReadCloser, error) {
	q := url.Values{"watch": {"true"}, "allowWatchBookmarks": {"true"}}
	for k, v := range query {
		q[k] = v
	}
	resp, err := c.send(ctx, http.MethodGet, path, q, "", nil)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return nil, statusError("WATCH", path, resp.StatusCode, out)
	}
	return resp.Body, nil
}

// statusError is the API error a refused request's body carries, or a
// generic one with the status code when the body is no Status.
func statusError(method, path string, code int, body []byte) error {
	var st metav1.Status
	if json.Unmarshal(body, &st) == nil && st.Kind == "Status" {
		return &apierrors.StatusError{ErrStatus: st}
	}
	return apierrors.NewGenericServerResponse(code, method, schema.GroupResource{}, "",
		fmt.Sprintf("%s %s: %s", method, path, strings.TrimSpace(string(body))), 0, false)
}
