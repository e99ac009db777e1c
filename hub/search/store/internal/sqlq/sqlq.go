package sqlq

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/selection"

	"github.com/flotilla-io/flotilla/hub/search/store"
)

// Dialect is what differs between the stores' SQL.
type Dialect struct {
	// Placeholder returns the n-th (from 1) parameter's placeholder.
	Placeholder func(n int) string
	// NameContains returns a condition on the row o whose lowercased
	// name contains s (lowercased already).
	NameContains func(b *Builder, s string) string
	// ImageContains returns a condition on the row o one of whose images
	// contains s.
	ImageContains func(b *Builder, s string) string
}

// Builder collects a statement's parameters.
type Builder struct {
	d    Dialect
	Args []any
}

// NewBuilder returns a Builder for d.
func NewBuilder(d Dialect) *Builder { return &Builder{d: d} }

// Arg adds a parameter and returns its placeholder.
func (b *Builder) Arg(v any) string {
	b.Args = append(b.Args, v)
	return b.d.Placeholder(len(b.Args))
}

// In returns "column IN (…)" over values.
func (b *Builder) In(column string, values []string) string {
	ph := make([]string, len(values))
	for i, v := range values {
		ph[i] = b.Arg(v)
	}
	return column + " IN (" + strings.Join(ph, ", ") + ")"
}

// Select is a Query's statement: the columns o.cluster and o.data of
// the objects that match, in order, one more than the page holds.
type Select struct {
	SQL   string
	Args  []any
	Limit int
	// Empty says that the query matches nothing (an empty cluster list)
	// and need not run.
	Empty bool
}

// Build returns the statement for q over the table objects (alias o), with
// labels(id, key, value), fields(id, path, value) and the dialect's images.
func Build(d Dialect, q store.Query) (Select, error) {
	limit, err := Limit(q.Limit)
	if err != nil {
		return Select{}, err
	}
	if q.Clusters != nil && len(q.Clusters) == 0 {
		return Select{Empty: true, Limit: limit}, nil
	}
	b := NewBuilder(d)
	var where []string
	in := func(column string, values []string, fold bool) {
		if len(values) == 0 {
			return
		}
		if fold {
			values = lower(values)
		}
		where = append(where, b.In(column, values))
	}
	in("o.cluster", q.Clusters, false)
	in("o.grp", q.Groups, false)
	in("o.resource", q.Resources, false)
	in("o.kind", q.Kinds, true)
	in("o.namespace", q.Namespaces, false)
	in("o.name", q.Names, false)
	in("o.status", q.Statuses, false)
	if q.NameContains != "" {
		where = append(where, d.NameContains(b, strings.ToLower(q.NameContains)))
	}
	if len(q.Images) > 0 {
		var or []string
		for _, image := range q.Images {
			or = append(or, d.ImageContains(b, image))
		}
		where = append(where, "("+strings.Join(or, " OR ")+")")
	}
	if q.OwnerKind != "" {
		where = append(where, "o.owner_kind = "+b.Arg(strings.ToLower(q.OwnerKind)))
	}
	if q.OwnerName != "" {
		where = append(where, "o.owner_name = "+b.Arg(q.OwnerName))
	}
	for _, r := range q.Labels {
		cond, err := labelCondition(b, r.Key(), r.Operator(), r.Values().List())
		if err != nil {
			return Select{}, err
		}
		where = append(where, cond)
	}
	for _, path := range sortedKeys(q.Fields) {
		value := q.Fields[path]
		switch path {
		case "metadata.name":
			where = append(where, "o.name = "+b.Arg(value))
		case "metadata.namespace":
			where = append(where, "o.namespace = "+b.Arg(value))
		default:
			where = append(where, "EXISTS (SELECT 1 FROM fields f WHERE f.id = o.id AND f.path = "+b.Arg(path)+" AND f.value = "+b.Arg(value)+")")
		}
	}
	if q.Continue != "" {
		k, err := DecodeContinue(q.Continue)
		if err != nil {
			return Select{}, err
		}
		where = append(where, fmt.Sprintf("(o.cluster, o.namespace, o.name, o.uid) > (%s, %s, %s, %s)",
			b.Arg(k.Cluster), b.Arg(k.Namespace), b.Arg(k.Name), b.Arg(k.UID)))
	}
	sql := "SELECT o.cluster, o.data FROM objects o"
	if len(where) > 0 {
		sql += " WHERE " + strings.Join(where, " AND ")
	}
	sql += " ORDER BY o.cluster, o.namespace, o.name, o.uid LIMIT " + b.Arg(limit+1)
	return Select{SQL: sql, Args: b.Args, Limit: limit}, nil
}

// labelCondition is one label requirement with a label selector's meaning:
// != and notin match objects without the key too.
func labelCondition(b *Builder, key string, op selection.Operator, values []string) (string, error) {
	has := func(values []string) string {
		cond := "SELECT 1 FROM labels l WHERE l.id = o.id AND l.key = " + b.Arg(key)
		if values != nil {
			cond += " AND " + b.In("l.value", values)
		}
		return cond
	}
	switch op {
	case selection.Equals, selection.DoubleEquals, selection.In:
		// The label table's key leads with (key, value): find the
		// matching objects there rather than test every object.
		return "o.id IN (SELECT l.id FROM labels l WHERE l.key = " + b.Arg(key) + " AND " + b.In("l.value", values) + ")", nil
	case selection.NotEquals, selection.NotIn:
		return "NOT EXISTS (" + has(values) + ")", nil
	case selection.Exists:
		return "o.id IN (SELECT l.id FROM labels l WHERE l.key = " + b.Arg(key) + ")", nil
	case selection.DoesNotExist:
		return "NOT EXISTS (" + has(nil) + ")", nil
	default:
		return "", fmt.Errorf("label selector %q: operator %q is not supported by the search index (use =, !=, in, notin, exists or !)", key, op)
	}
}

// Limit returns a query's page size: DefaultLimit for 0, at most MaxLimit.
func Limit(n int) (int, error) {
	switch {
	case n < 0:
		return 0, fmt.Errorf("limit %d: must be 0 (the default, %d) or more", n, store.DefaultLimit)
	case n == 0:
		return store.DefaultLimit, nil
	case n > store.MaxLimit:
		return store.MaxLimit, nil
	}
	return n, nil
}

// Key is a row's sort key, which a continue token carries.
type Key struct {
	Cluster   string `json:"c"`
	Namespace string `json:"ns"`
	Name      string `json:"n"`
	UID       string `json:"u"`
}

const continuePrefix = "s1."

// EncodeContinue returns the token that continues after k.
func EncodeContinue(k Key) string {
	data, _ := json.Marshal(k)
	return continuePrefix + base64.RawURLEncoding.EncodeToString(data)
}

// DecodeContinue parses a token of EncodeContinue; its errors wrap
// store.ErrBadContinue.
func DecodeContinue(token string) (Key, error) {
	bad := func(why string) (Key, error) {
		return Key{}, fmt.Errorf("%w: %s; pass the metadata.continue of the previous page unchanged, or none to start again", store.ErrBadContinue, why)
	}
	rest, ok := strings.CutPrefix(token, continuePrefix)
	if !ok {
		return bad("not a token of this index")
	}
	data, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return bad("not base64")
	}
	var k Key
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&k); err != nil || k.Cluster == "" || k.Name == "" || k.UID == "" {
		return bad("damaged")
	}
	return k, nil
}

// Newer says whether resource version next replaces held: when both are
// numbers (as every API server's are), only a larger one does, so that a
// batch replayed after a newer one changes nothing; otherwise any other
// version does.
func Newer(held, next string) bool {
	h, err1 := strconv.ParseUint(held, 10, 64)
	n, err2 := strconv.ParseUint(next, 10, 64)
	if err1 == nil && err2 == nil {
		return n > h
	}
	return next != held
}

// ErrBadObject is wrapped by Apply's error for an object it cannot index.
var ErrBadObject = errors.New("invalid object")

// CheckUpsert returns an error naming what an object lacks.
func CheckUpsert(cluster string, i int, uid, resource, name string) error {
	switch {
	case cluster == "":
		return fmt.Errorf("%w: the cluster name is empty", ErrBadObject)
	case uid == "":
		return fmt.Errorf("%w: upserts[%d] (%s %q) has no uid", ErrBadObject, i, resource, name)
	case resource == "" || name == "":
		return fmt.Errorf("%w: upserts[%d] (uid %s) needs a resource and a name", ErrBadObject, i, uid)
	}
	return nil
}

func lower(values []string) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = strings.ToLower(v)
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
