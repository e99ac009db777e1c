package query

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
	"github.com/flotilla-io/flotilla/hub/search/store"
)

// Terms is a parsed query: what to ask the store, and the clusters it
// names, which the handler narrows to those the caller may see.
type Terms struct {
	// Query selects objects; its Clusters are left for the handler.
	Query store.Query
	// Clusters are the clusters the query names (nil: every cluster);
	// NotClusters the ones it excludes.
	Clusters    []string
	NotClusters []string
	// Nothing says that the query excludes every indexed kind or group:
	// no object can match.
	Nothing bool
}

// LabelPrefix reaches a label whose key is one of the reserved keys:
// label:name=web.
const LabelPrefix = "label:"

// reserved are the keys that are not labels.
var reserved = []string{"kind", "group", "namespace", "name", "cluster", "image", "status", "owner"}

// negatable are the reserved keys that take !=: their complement is known
// (the indexed kinds and groups, the visible clusters).
var negatable = []string{"kind", "group", "cluster"}

// SyntaxError says which term of a query is wrong and how to write it.
type SyntaxError struct {
	Term string
	Msg  string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("query term %q: %s", e.Term, e.Msg)
}

// NotIndexedError says that a query names a kind or group that the agents
// do not index.
type NotIndexedError struct {
	Term    string
	What    string
	Indexed []string
}

func (e *NotIndexedError) Error() string {
	return fmt.Sprintf("query term %q: %s is not indexed by search (indexed: %s); to index it, add it to spec.resources of SearchConfig %s",
		e.Term, e.What, strings.Join(e.Indexed, ", "), searchv1alpha1.DefaultConfigName)
}

// Parse reads a query: space-separated terms key=value, key!=value and
// key=v1,v2 (any of), with the reserved keys kind, group, namespace,
// name, cluster, image, status and owner, every other key a label (or
// label:<key> for a label named like a reserved key), and one free word
// that names must contain. indexed are the resources the agents index,
// against which kinds and groups are checked.
func Parse(q string, indexed []searchv1alpha1.SearchResource) (Terms, error) {
	var t Terms
	seen := map[string]bool{}
	var notKinds, notGroups []string
	for _, term := range strings.Fields(q) {
		key, op, values, err := splitTerm(term)
		if err != nil {
			return Terms{}, err
		}
		if op == "" {
			if t.Query.NameContains != "" {
				return Terms{}, &SyntaxError{Term: term, Msg: fmt.Sprintf("only one free word searches names, and %q is one already: use name=<exact name> for an exact name", t.Query.NameContains)}
			}
			t.Query.NameContains = term
			continue
		}
		if slices.Contains(reserved, key) {
			if seen[key+op] {
				return Terms{}, &SyntaxError{Term: term, Msg: fmt.Sprintf("%s%s appears twice: list the values in one term, %s%s%s", key, op, key, op, "a,b")}
			}
			seen[key+op] = true
			if op == "!=" && !slices.Contains(negatable, key) {
				return Terms{}, &SyntaxError{Term: term, Msg: fmt.Sprintf("%s does not take != (only %s do): name the values you want, %s=a,b", key, strings.Join(negatable, ", "), key)}
			}
		}
		switch key {
		case "kind":
			for _, v := range values {
				if !slices.ContainsFunc(indexed, func(r searchv1alpha1.SearchResource) bool { return strings.EqualFold(r.Kind, v) }) {
					return Terms{}, &NotIndexedError{Term: term, What: "kind " + v, Indexed: indexedKinds(indexed)}
				}
			}
			if op == "=" {
				t.Query.Kinds = values
			} else {
				notKinds = values
			}
		case "group":
			for i, v := range values {
				if v == "core" {
					values[i] = ""
				}
				if !slices.Contains(rawGroups(indexed), values[i]) {
					return Terms{}, &NotIndexedError{Term: term, What: "group " + v, Indexed: indexedGroups(indexed)}
				}
			}
			if op == "=" {
				t.Query.Groups = values
			} else {
				notGroups = values
			}
		case "namespace":
			t.Query.Namespaces = values
		case "name":
			t.Query.Names = values
		case "cluster":
			if op == "=" {
				t.Clusters = values
			} else {
				t.NotClusters = values
			}
		case "image":
			t.Query.Images = values
		case "status":
			t.Query.Statuses = values
		case "owner":
			if len(values) > 1 {
				return Terms{}, &SyntaxError{Term: term, Msg: "owner takes one value: owner=<Kind>/<name> or owner=<name>"}
			}
			kind, name, found := strings.Cut(values[0], "/")
			if !found {
				kind, name = "", kind
			}
			if name == "" || (found && kind == "") {
				return Terms{}, &SyntaxError{Term: term, Msg: "write the owner as <Kind>/<name> or <name>, e.g. owner=ReplicaSet/web-5d4f"}
			}
			t.Query.OwnerKind, t.Query.OwnerName = kind, name
		default:
			r, err := labelRequirement(strings.TrimPrefix(key, LabelPrefix), op, values)
			if err != nil {
				return Terms{}, &SyntaxError{Term: term, Msg: err.Error()}
			}
			t.Query.Labels = append(t.Query.Labels, *r)
		}
	}
	t.Query.Kinds, t.Nothing = exclude(t.Query.Kinds, notKinds, indexedKinds(indexed), strings.EqualFold)
	var none bool
	t.Query.Groups, none = exclude(t.Query.Groups, notGroups, rawGroups(indexed), func(a, b string) bool { return a == b })
	t.Nothing = t.Nothing || none
	return t, nil
}

// splitTerm reads key, operator ("=", "!=", or "" for a free word) and
// values of one term.
func splitTerm(term string) (key, op string, values []string, err error) {
	i := strings.Index(term, "=")
	if i < 0 {
		if strings.ContainsAny(term, ",!") {
			return "", "", nil, &SyntaxError{Term: term, Msg: "a free word is part of a name: write key=value to select by anything else"}
		}
		return "", "", nil, nil
	}
	key, op = term[:i], "="
	if strings.HasSuffix(key, "!") {
		key, op = key[:len(key)-1], "!="
	}
	if key == "" {
		return "", "", nil, &SyntaxError{Term: term, Msg: "a term needs a key before " + op + ", e.g. kind=Pod"}
	}
	value := term[i+1:]
	if value == "" {
		return "", "", nil, &SyntaxError{Term: term, Msg: fmt.Sprintf("%s%s has no value: write %s%s<value>", key, op, key, op)}
	}
	if strings.HasPrefix(value, "=") {
		return "", "", nil, &SyntaxError{Term: term, Msg: fmt.Sprintf("write one = (or !=): %s%s%s", key, op, strings.TrimLeft(value, "="))}
	}
	values = strings.Split(value, ",")
	if slices.Contains(values, "") {
		return "", "", nil, &SyntaxError{Term: term, Msg: "an empty value in the list: separate values with one comma, no spaces"}
	}
	return key, op, values, nil
}

// labelRequirement is a label term as a selector requirement; its errors
// are apimachinery's, which say what a label key or value may hold.
func labelRequirement(key, op string, values []string) (*labels.Requirement, error) {
	var sop selection.Operator
	switch {
	case op == "=" && len(values) == 1:
		sop = selection.Equals
	case op == "=":
		sop = selection.In
	case len(values) == 1:
		sop = selection.NotEquals
	default:
		sop = selection.NotIn
	}
	r, err := labels.NewRequirement(key, sop, values)
	if err != nil {
		return nil, fmt.Errorf("not a label selector (keys other than %s are labels): %w", strings.Join(reserved, ", "), err)
	}
	return r, nil
}

// exclude is want (or, if it is empty, all) without not; none says
// nothing is left though something was excluded.
func exclude(want, not, all []string, eq func(a, b string) bool) ([]string, bool) {
	if len(not) == 0 {
		return want, false
	}
	if len(want) == 0 {
		want = all
	}
	var out []string
	for _, w := range want {
		if !slices.ContainsFunc(not, func(n string) bool { return eq(w, n) }) {
			out = append(out, w)
		}
	}
	return out, len(out) == 0
}

func indexedKinds(rs []searchv1alpha1.SearchResource) []string {
	var out []string
	for _, r := range rs {
		if !slices.Contains(out, r.Kind) {
			out = append(out, r.Kind)
		}
	}
	return out
}

// rawGroups are the indexed API groups, "" the core group.
func rawGroups(rs []searchv1alpha1.SearchResource) []string {
	var out []string
	for _, r := range rs {
		if !slices.Contains(out, r.Group) {
			out = append(out, r.Group)
		}
	}
	return out
}

// indexedGroups are the indexed API groups as a query names them.
func indexedGroups(rs []searchv1alpha1.SearchResource) []string {
	out := rawGroups(rs)
	for i, g := range out {
		if g == "" {
			out[i] = "core"
		}
	}
	return out
}
