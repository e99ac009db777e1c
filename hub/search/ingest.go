package search

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
	"github.com/flotilla-io/flotilla/hub/search/store"
)

// Limits of one ChangeBatch. The agent sends at most 500 objects and
// about 1 MiB; the hub takes some more, and refuses what would make its
// memory follow an agent's whims.
const (
	MaxBatchObjects = 1000
	MaxBatchBytes   = 8 << 20
)

// Retry-After of the answers that ask an agent to come back.
const (
	busyRetryAfter        = 1
	unavailableRetryAfter = 5
)

var ingestGR = schema.GroupResource{Group: searchv1alpha1.GroupName, Resource: ingestResource}

// changes applies a cluster's ChangeBatch to the store and acknowledges
// it.
func (s *Server) changes(w http.ResponseWriter, r *http.Request, cluster string) {
	if r.Method != http.MethodPost {
		fail(w, r, apierrors.NewMethodNotSupported(ingestGR, r.Method))
		return
	}
	select {
	case s.inflight <- struct{}{}:
		defer func() { <-s.inflight }()
	default:
		fail(w, r, apierrors.NewTooManyRequests(fmt.Sprintf("the search index is applying %d batches; send this one again later", cap(s.inflight)), busyRetryAfter))
		return
	}
	b, err := decodeBatch(r)
	if err != nil {
		fail(w, r, err)
		return
	}
	if err := s.store.Apply(r.Context(), cluster, b.Upserts, b.Deletes); err != nil {
		fail(w, r, storeError(err))
		return
	}
	ack := &searchv1alpha1.ChangeAck{Seq: b.Seq}
	ack.APIVersion, ack.Kind = searchv1alpha1.GroupVersion.String(), "ChangeAck"
	responsewriters.WriteRawJSON(http.StatusOK, ack, w)
}

// decodeBatch reads a ChangeBatch and says what is wrong with one that
// cannot be applied.
func decodeBatch(r *http.Request) (*searchv1alpha1.ChangeBatch, *apierrors.StatusError) {
	data, err := io.ReadAll(io.LimitReader(r.Body, MaxBatchBytes+1))
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("read the ChangeBatch: %v", err))
	}
	if len(data) > MaxBatchBytes {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("a ChangeBatch is at most %d bytes: send fewer objects per batch", MaxBatchBytes))
	}
	var b searchv1alpha1.ChangeBatch
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the body is not a ChangeBatch (JSON): %v", err))
	}
	if n := len(b.Upserts) + len(b.Deletes); n > MaxBatchObjects {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("a ChangeBatch holds at most %d objects, this one %d: send fewer objects per batch", MaxBatchObjects, n))
	}
	for i, o := range b.Upserts {
		switch {
		case o.UID == "":
			return nil, apierrors.NewBadRequest(fmt.Sprintf("upserts[%d] (%s %s): uid is required", i, o.Kind, o.Name))
		case o.Resource == "" || o.Version == "" || o.Kind == "":
			return nil, apierrors.NewBadRequest(fmt.Sprintf("upserts[%d] (%s): version, resource and kind are required", i, o.UID))
		case o.Name == "":
			return nil, apierrors.NewBadRequest(fmt.Sprintf("upserts[%d] (%s): name is required", i, o.UID))
		}
	}
	for i, d := range b.Deletes {
		if d.UID == "" || d.Resource == "" {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("deletes[%d]: uid and resource are required", i))
		}
	}
	return &b, nil
}

// versions answers what the store holds of one resource of a cluster.
func (s *Server) versions(w http.ResponseWriter, r *http.Request, cluster string) {
	if r.Method != http.MethodGet {
		fail(w, r, apierrors.NewMethodNotSupported(ingestGR, r.Method))
		return
	}
	q := r.URL.Query()
	gr := schema.GroupResource{Group: q.Get("group"), Resource: q.Get("resource")}
	if gr.Resource == "" {
		fail(w, r, apierrors.NewBadRequest("versions needs ?resource=<plural>[&group=<group>]"))
		return
	}
	v, err := s.store.Versions(r.Context(), cluster, gr)
	if err != nil {
		fail(w, r, storeError(err))
		return
	}
	out := &searchv1alpha1.ObjectVersions{Group: gr.Group, Resource: gr.Resource, Versions: v}
	out.APIVersion, out.Kind = searchv1alpha1.GroupVersion.String(), "ObjectVersions"
	responsewriters.WriteRawJSON(http.StatusOK, out, w)
}

// storeError is the answer to a store's error: 503 with Retry-After while
// its database does not answer.
func storeError(err error) *apierrors.StatusError {
	if errors.Is(err, store.ErrUnavailable) {
		return &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: http.StatusServiceUnavailable, Reason: metav1.StatusReasonServiceUnavailable,
			Message: err.Error(), Details: &metav1.StatusDetails{RetryAfterSeconds: unavailableRetryAfter},
		}}
	}
	return apierrors.NewInternalError(err)
}

func notFound(msg string) *apierrors.StatusError {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusNotFound, Reason: metav1.StatusReasonNotFound, Message: msg,
	}}
}

func fail(w http.ResponseWriter, r *http.Request, err *apierrors.StatusError) {
	if err.ErrStatus.Code >= 500 {
		klog.FromContext(r.Context()).Info("Search ingest failed", "path", r.URL.Path, "err", err.Error())
	}
	responsewriters.ErrorNegotiated(err, scheme.Codecs, searchv1alpha1.GroupVersion, w, r)
}
