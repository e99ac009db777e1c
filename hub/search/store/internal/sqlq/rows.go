package sqlq

import (
	"encoding/json"
	"fmt"
	"strings"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
	"github.com/flotilla-io/flotilla/hub/search/store"
)

// Row is an object as the stores write it: the columns of objects, and
// the rows of its label, field and image tables.
type Row struct {
	UID, Group, Resource, Kind, Namespace, Name, RV, Status string
	OwnerKind, OwnerName                                    string
	// Data is the whole Object as JSON, which a query returns.
	Data   []byte
	Labels map[string]string
	Fields map[string]string
	Images []string
}

// Flatten returns o's row; kinds are lowercased for matching without
// regard to case.
func Flatten(o *searchv1alpha1.Object) (Row, error) {
	data, err := json.Marshal(o)
	if err != nil {
		return Row{}, fmt.Errorf("encoding object %s: %w", o.UID, err)
	}
	r := Row{
		UID: string(o.UID), Group: o.Group, Resource: o.Resource, Kind: strings.ToLower(o.Kind),
		Namespace: o.Namespace, Name: o.Name, RV: o.ResourceVersion, Status: o.Status,
		Data: data, Labels: o.Labels, Fields: o.Fields, Images: o.Images,
	}
	if o.Owner != nil {
		r.OwnerKind, r.OwnerName = strings.ToLower(o.Owner.Kind), o.Owner.Name
	}
	return r, nil
}

// Item decodes a row's data into the item a query returns.
func Item(cluster string, data []byte) (searchv1alpha1.SearchItem, error) {
	item := searchv1alpha1.SearchItem{Cluster: cluster}
	if err := json.Unmarshal(data, &item.Object); err != nil {
		return item, fmt.Errorf("decoding an indexed object of cluster %s: %w", cluster, err)
	}
	return item, nil
}

// Page cuts items, fetched one past the limit, into a page.
func Page(items []searchv1alpha1.SearchItem, limit int) store.Page {
	if len(items) <= limit {
		return store.Page{Items: items}
	}
	items = items[:limit]
	last := items[limit-1]
	return store.Page{Items: items, Continue: EncodeContinue(Key{
		Cluster: last.Cluster, Namespace: last.Namespace, Name: last.Name, UID: string(last.UID),
	})}
}

// Rows is what both stores' drivers return for a query (database/sql's
// and pgx's rows).
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// ReadPage reads the (cluster, object) rows of a query built with limit
// into a page; wrap turns the driver's errors into the store's.
func ReadPage(rows Rows, limit int, wrap func(error) error) (store.Page, error) {
	var items []searchv1alpha1.SearchItem
	for rows.Next() {
		var cluster string
		var data []byte
		if err := rows.Scan(&cluster, &data); err != nil {
			return store.Page{}, wrap(err)
		}
		item, err := Item(cluster, data)
		if err != nil {
			return store.Page{}, err
		}
		items = append(items, item)
	}
	if err := rows.Err(); err != nil {
		return store.Page{}, wrap(err)
	}
	return Page(items, limit), nil
}

// ReadMap reads two-column rows, a key and a value, into a map.
func ReadMap[K ~string, V any](rows Rows, wrap func(error) error) (map[K]V, error) {
	m := map[K]V{}
	for rows.Next() {
		var k string
		var v V
		if err := rows.Scan(&k, &v); err != nil {
			return nil, wrap(err)
		}
		m[K(k)] = v
	}
	return m, wrap(rows.Err())
}
