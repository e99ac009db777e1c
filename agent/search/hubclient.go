package search

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/search"
)

// hubClient reaches the hub's ingest endpoint as the agent.
type hubClient struct {
	host    string
	cluster string
	http    *http.Client
}

// busyError is the hub's answer that it cannot take a batch now (429,
// 503): the agent keeps its changes and tries again after retryAfter.
type busyError struct {
	code       int
	message    string
	retryAfter time.Duration
}

func (e *busyError) Error() string {
	return fmt.Sprintf("the hub's search index cannot take changes now (%d): %s", e.code, e.message)
}

// send posts b and returns once the hub has committed it.
func (h *hubClient) send(ctx context.Context, b *searchv1alpha1.ChangeBatch) error {
	b.APIVersion, b.Kind = searchv1alpha1.GroupVersion.String(), "ChangeBatch"
	body, err := json.Marshal(b)
	if err != nil {
		return err
	}
	var ack searchv1alpha1.ChangeAck
	if err := h.do(ctx, http.MethodPost, search.ChangesPath(h.cluster), body, &ack); err != nil {
		return err
	}
	if ack.Seq != b.Seq {
		return fmt.Errorf("the hub acknowledged batch %d, not %d", ack.Seq, b.Seq)
	}
	return nil
}

// versions returns the versions the hub's index holds of gr's objects of
// this cluster.
func (h *hubClient) versions(ctx context.Context, gr schema.GroupResource) (map[types.UID]string, error) {
	q := url.Values{"group": {gr.Group}, "resource": {gr.Resource}}
	var v searchv1alpha1.ObjectVersions
	if err := h.do(ctx, http.MethodGet, search.VersionsPath(h.cluster)+"?"+q.Encode(), nil, &v); err != nil {
		return nil, err
	}
	if v.Versions == nil {
		v.Versions = map[types.UID]string{}
	}
	return v.Versions, nil
}

func (h *hubClient) do(ctx context.Context, method, path string, body []byte, into any) error {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(h.host, "/")+path, r)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := h.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("%s %s: read the answer: %w", method, path, err)
	}
	if resp.StatusCode == http.StatusOK {
		return json.Unmarshal(data, into)
	}
	msg := strings.TrimSpace(string(data))
	var status metav1.Status
	if json.Unmarshal(data, &status) == nil && status.Message != "" {
		msg = status.Message
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		after, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		return &busyError{code: resp.StatusCode, message: msg, retryAfter: time.Duration(after) * time.Second}
	}
	return fmt.Errorf("%s %s: the hub answered %d: %s", method, path, resp.StatusCode, msg)
}

// isBusy says whether err is the hub's answer to come back later.
func isBusy(err error) (*busyError, bool) {
	var b *busyError
	ok := errors.As(err, &b)
	return b, ok
}
