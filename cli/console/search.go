package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/search"
)

// searchUnavailable is what the page says when the hub serves no search
// (404: its index is off or it runs on an existing cluster) or its index
// does not answer (503).
const searchUnavailable = "search is unavailable"

// searchRow is one object found.
type searchRow struct {
	Cluster, Namespace, Name, Kind, Status, Images, Age string
}

// searchData is the search view's model.
type searchData struct {
	Query string
	Rows  []searchRow
	// Error is the hub's message for a query it refused, as it is.
	Error string
	// Next is the URL of the next page, "" on the last.
	Next string
	// Command is the equivalent CLI command.
	Command string
}

// search queries the hub's search index with the caller's credentials, so
// that they see the objects of the clusters the hub lets them see.
func (s *server) search(r *http.Request) (*page, error) {
	q := r.URL.Query()
	d := searchData{Query: strings.TrimSpace(q.Get("q"))}
	d.Command = "flotilla search " + shellQuote(d.Query)
	p := &page{Title: "Search", Section: "search", Query: d.Query, Data: &d}
	if d.Query == "" {
		return p, nil
	}
	res, err := s.searchHub(r.Context(), d.Query, q.Get("limit"), q.Get("continue"))
	if err != nil {
		d.Error = err.Error()
		return p, nil
	}
	for _, it := range res.Items {
		d.Rows = append(d.Rows, searchRow{Cluster: it.Cluster, Namespace: it.Namespace, Name: it.Name, Kind: it.Kind,
			Status: it.Status, Images: strings.Join(it.Images, ", "), Age: ago(it.CreationTimestamp)})
	}
	if res.Continue != "" {
		next := url.Values{"q": {d.Query}, "continue": {res.Continue}}
		if l := q.Get("limit"); l != "" {
			next.Set("limit", l)
		}
		d.Next = "/search?" + next.Encode()
	}
	return p, nil
}

// searchHub GETs one page of the query from the hub's search endpoint.
func (s *server) searchHub(ctx context.Context, query, limit, cont string) (*searchv1alpha1.SearchResult, error) {
	req := s.store.kube.Discovery().RESTClient().Get().AbsPath(search.SearchPath).Param("q", query)
	if limit != "" {
		req = req.Param("limit", limit)
	}
	if cont != "" {
		req = req.Param("continue", cont)
	}
	res := req.Do(ctx)
	raw, err := res.Raw()
	if err != nil {
		// Error, not Raw's error, decodes the hub's Status.
		err = res.Error()
		switch {
		case apierrors.IsNotFound(err):
			return nil, errors.New(searchUnavailable + ": the hub serves no search (flotilla-hub --search-database off, or a hub on an existing cluster); see docs/search.md")
		case apierrors.IsServiceUnavailable(err):
			return nil, errors.New(searchUnavailable + ": " + statusMessage(err))
		case apierrors.IsBadRequest(err):
			// The hub's message names the term and how to write it.
			return nil, errors.New(statusMessage(err))
		}
		return nil, fmt.Errorf("search: %w", err)
	}
	var page searchv1alpha1.SearchResult
	if err := json.Unmarshal(raw, &page); err != nil {
		return nil, fmt.Errorf("the hub answered the search with something else than a SearchResult: %w", err)
	}
	return &page, nil
}

func statusMessage(err error) string {
	var st apierrors.APIStatus
	if errors.As(err, &st) && st.Status().Message != "" {
		return st.Status().Message
	}
	return err.Error()
}

// shellQuote quotes a query for the equivalent command.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
