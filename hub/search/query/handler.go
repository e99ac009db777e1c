package query

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
	"github.com/flotilla-io/flotilla/hub/search/store"
	"github.com/flotilla-io/flotilla/internal/search"
)

// Resources returns the resources the agents index (SearchConfig
// default's, or DefaultResources without it).
type Resources func(ctx context.Context) ([]searchv1alpha1.SearchResource, error)

// Option configures New.
type Option func(*handler)

// WithResources tells the handler which resources the agents index, so
// that a query over another kind says it is not indexed and the
// Kubernetes-shaped discovery lists them. Without it the handler assumes
// searchv1alpha1.DefaultResources. (hub/search passes a function reading
// SearchConfig default from its informer.)
func WithResources(r Resources) Option { return func(h *handler) { h.resources = r } }

// handler serves search.SearchPath and search.ResourcesPrefix.
type handler struct {
	store     store.Store
	access    *access
	resources Resources
}

// New returns the handler of the query paths: search.SearchPath (the
// query language, a SearchResult) and everything under
// search.ResourcesPrefix (the Kubernetes API's shape, for kubectl). authz
// is the API server's authorizer, asked which clusters each caller sees;
// the caller's user is in the request's context.
//
// The API server must let every authenticated user reach these paths
// (Authorize says so): the clusters a user sees are the authorization.
func New(s store.Store, authz authorizer.Authorizer, opts ...Option) http.Handler {
	h := &handler{
		store: s,
		resources: func(context.Context) ([]searchv1alpha1.SearchResource, error) {
			return searchv1alpha1.DefaultResources, nil
		},
	}
	h.access = &access{authz: authz, now: time.Now, byUser: map[string]visible{}, clusters: func(ctx context.Context) ([]string, error) {
		counts, err := s.Clusters(ctx)
		if err != nil {
			return nil, err
		}
		return slices.Collect(maps.Keys(counts)), nil
	}}
	for _, o := range opts {
		o(h)
	}
	return h
}

// Authorize is the decision about a request of the query paths (not the
// ingest paths) that the API server's authorizer makes before New's
// handler runs: every authenticated user may read them, since each sees
// only the clusters its grants name; nothing may write them.
func Authorize(a authorizer.Attributes) (authorizer.Decision, string) {
	u := a.GetUser()
	if u == nil || u.GetName() == "" || u.GetName() == user.Anonymous {
		return authorizer.DecisionDeny, "search answers authenticated hub users only"
	}
	switch a.GetVerb() {
	case "get", "list", "watch":
		// The handler answers a watch itself: search does not watch.
		return authorizer.DecisionAllow, ""
	}
	return authorizer.DecisionDeny, "search is read-only: GET " + search.SearchPath + "?q=… or " + search.ResourcesPrefix + "…"
}

var searchResource = schema.GroupResource{Group: "search.flotilla.io", Resource: "search"}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		h.fail(w, r, apierrors.NewMethodNotSupported(searchResource, r.Method))
		return
	}
	switch {
	case r.URL.Path == search.SearchPath:
		h.search(w, r)
	case strings.HasPrefix(r.URL.Path, search.ResourcesPrefix) || r.URL.Path+"/" == search.ResourcesPrefix:
		h.kube(w, r, strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, strings.TrimSuffix(search.ResourcesPrefix, "/")), "/"))
	default:
		h.fail(w, r, apierrors.NewNotFound(searchResource, r.URL.Path))
	}
}

// search answers ?q=&limit=&continue=&clusters= with a SearchResult.
func (h *handler) search(w http.ResponseWriter, r *http.Request) {
	params := r.URL.Query()
	indexed, err := h.resources(r.Context())
	if err != nil {
		h.fail(w, r, apierrors.NewServiceUnavailable(fmt.Sprintf("cannot tell which resources are indexed: %v", err)))
		return
	}
	terms, err := Parse(params.Get("q"), indexed)
	if err != nil {
		h.fail(w, r, apierrors.NewBadRequest(err.Error()))
		return
	}
	if err := pageParams(params.Get("limit"), params.Get("continue"), &terms.Query); err != nil {
		h.fail(w, r, apierrors.NewBadRequest(err.Error()))
		return
	}
	page, err := h.query(r.Context(), terms)
	if err != nil {
		h.fail(w, r, storeError(err))
		return
	}
	res := &searchv1alpha1.SearchResult{Items: page.Items}
	res.APIVersion, res.Kind = searchv1alpha1.GroupVersion.String(), "SearchResult"
	res.Continue = page.Continue
	if res.Items == nil {
		res.Items = []searchv1alpha1.SearchItem{}
	}
	responsewriters.WriteRawJSON(http.StatusOK, res, w)
}

// query runs terms for the request's user over the clusters it sees.
func (h *handler) query(ctx context.Context, terms Terms) (store.Page, error) {
	u, ok := apirequest.UserFrom(ctx)
	if !ok {
		return store.Page{}, errUnauthenticated
	}
	if terms.Nothing {
		return store.Page{}, nil
	}
	clusters, err := h.access.clustersFor(ctx, u, terms.Clusters, terms.NotClusters)
	if err != nil {
		return store.Page{}, err
	}
	if clusters != nil && len(clusters) == 0 {
		return store.Page{}, nil
	}
	terms.Query.Clusters = clusters
	return h.store.Query(ctx, terms.Query)
}

var errUnauthenticated = errors.New("search answers authenticated hub users only")

// pageParams reads limit and continue into q.
func pageParams(limit, cont string, q *store.Query) error {
	if limit != "" {
		n, err := strconv.Atoi(limit)
		if err != nil || n < 0 {
			return fmt.Errorf("limit %q is not a page size: give a number from 1 to %d", limit, store.MaxLimit)
		}
		q.Limit = min(n, store.MaxLimit)
	}
	q.Continue = cont
	return nil
}

// storeError is the API's answer to a query's error.
func storeError(err error) *apierrors.StatusError {
	switch {
	case errors.Is(err, errUnauthenticated):
		return apierrors.NewUnauthorized(err.Error())
	case errors.Is(err, store.ErrBadContinue):
		return apierrors.NewBadRequest(fmt.Sprintf("%v: it comes from another query or hub; start again without continue", err))
	case errors.Is(err, store.ErrUnavailable):
		msg := err.Error()
		if !strings.HasPrefix(msg, store.ErrUnavailable.Error()) {
			msg = store.ErrUnavailable.Error() + ": " + msg
		}
		return apierrors.NewServiceUnavailable(msg)
	}
	return apierrors.NewInternalError(err)
}

// fail answers a Status as the API server writes one (apiVersion v1), which
// every client decodes whatever groups it knows.
func (h *handler) fail(w http.ResponseWriter, _ *http.Request, err *apierrors.StatusError) {
	st := err.Status()
	st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	responsewriters.WriteRawJSON(int(st.Code), st, w)
}
