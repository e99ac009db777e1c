package query

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
	"github.com/flotilla-io/flotilla/hub/search/store"
)

// memStore is a store.Store in memory for the handler's unit tests: the
// handler's part is what it asks, the stores' own suite tests answers.
type memStore struct {
	items []searchv1alpha1.SearchItem
	err   error
	// queries records what the handler asked.
	queries []store.Query
}

var _ store.Store = (*memStore)(nil)

func (m *memStore) Apply(context.Context, string, []searchv1alpha1.Object, []searchv1alpha1.ObjectRef) error {
	return nil
}

func (m *memStore) Versions(context.Context, string, schema.GroupResource) (map[types.UID]string, error) {
	return nil, nil
}
func (m *memStore) DeleteCluster(context.Context, string) error { return nil }
func (m *memStore) Ping(context.Context) error                  { return m.err }
func (m *memStore) Close() error                                { return nil }

func (m *memStore) Clusters(context.Context) (map[string]int64, error) {
	if m.err != nil {
		return nil, m.err
	}
	out := map[string]int64{}
	for _, it := range m.items {
		out[it.Cluster]++
	}
	return out, nil
}

func (m *memStore) Query(_ context.Context, q store.Query) (store.Page, error) {
	m.queries = append(m.queries, q)
	if m.err != nil {
		return store.Page{}, m.err
	}
	in := func(list []string, v string, fold bool) bool {
		return len(list) == 0 || slices.ContainsFunc(list, func(x string) bool { return x == v || (fold && strings.EqualFold(x, v)) })
	}
	var out []searchv1alpha1.SearchItem
	for _, it := range m.items {
		ok := (q.Clusters == nil || slices.Contains(q.Clusters, it.Cluster)) &&
			in(q.Groups, it.Group, false) && in(q.Resources, it.Resource, false) && in(q.Kinds, it.Kind, true) &&
			in(q.Namespaces, it.Namespace, false) && in(q.Names, it.Name, false) && in(q.Statuses, it.Status, false) &&
			strings.Contains(strings.ToLower(it.Name), strings.ToLower(q.NameContains)) &&
			(len(q.Images) == 0 || slices.ContainsFunc(it.Images, func(img string) bool {
				return slices.ContainsFunc(q.Images, func(s string) bool { return strings.Contains(img, s) })
			})) &&
			labels.NewSelector().Add(q.Labels...).Matches(labels.Set(it.Labels))
		for k, v := range q.Fields {
			ok = ok && it.Fields[k] == v
		}
		if ok {
			out = append(out, it)
		}
	}
	limit := q.Limit
	if limit == 0 {
		limit = store.DefaultLimit
	}
	start := 0
	if q.Continue != "" {
		n, err := strconv.Atoi(q.Continue)
		if err != nil {
			return store.Page{}, store.ErrBadContinue
		}
		start = n
	}
	out = out[min(start, len(out)):]
	var page store.Page
	if len(out) > limit {
		out, page.Continue = out[:limit], strconv.Itoa(start+limit)
	}
	page.Items = out
	return page, nil
}
