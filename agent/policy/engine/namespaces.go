package engine

import (
	"path/filepath"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

// namespaceGVK is the kind of namespaces.
var namespaceGVK = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}

// selectNamespaces returns the names of the namespaces the policy's
// namespaceSelector selects, sorted: those whose name matches an include
// glob and no exclude glob, and whose labels match. With labels but no
// include, include is "*"; with neither, nothing is selected.
func (e *evaluator) selectNamespaces() ([]string, error) {
	sel := e.cp.Spec.NamespaceSelector
	hasLabels := len(sel.MatchLabels) > 0 || len(sel.MatchExpressions) > 0
	include := sel.Include
	if len(include) == 0 {
		if !hasLabels {
			return nil, nil
		}
		include = []policyv1.NonEmptyString{"*"}
	}
	for _, p := range append(append([]policyv1.NonEmptyString{}, include...), sel.Exclude...) {
		if _, err := filepath.Match(string(p), ""); err != nil {
			return nil, err
		}
	}
	labelSel, err := metav1.LabelSelectorAsSelector(&metav1.LabelSelector{MatchLabels: sel.MatchLabels, MatchExpressions: sel.MatchExpressions})
	if err != nil {
		return nil, err
	}
	m, err := e.r.Mapping(namespaceGVK)
	if err != nil {
		return nil, err
	}
	list, err := e.r.List(e.ctx, m, "", labelSel)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, ns := range list {
		if sel.TerminatingInclusion == policyv1.TerminatingNever && ns.GetDeletionTimestamp() != nil {
			continue
		}
		if matchesAny(ns.GetName(), include) && !matchesAny(ns.GetName(), sel.Exclude) {
			names = append(names, ns.GetName())
		}
	}
	sort.Strings(names)
	return names, nil
}

// matchesAny says whether name matches one of the globs (checked before).
func matchesAny(name string, globs []policyv1.NonEmptyString) bool {
	for _, g := range globs {
		if ok, _ := filepath.Match(string(g), name); ok {
			return true
		}
	}
	return false
}

// sortByName sorts objects by namespace and name.
func sortByName(objs []*unstructured.Unstructured) {
	sort.Slice(objs, func(i, j int) bool {
		if objs[i].GetNamespace() != objs[j].GetNamespace() {
			return objs[i].GetNamespace() < objs[j].GetNamespace()
		}
		return objs[i].GetName() < objs[j].GetName()
	})
}
