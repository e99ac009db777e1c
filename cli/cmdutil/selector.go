package cmdutil

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ParseLabelSelector parses the label selector s given to flag, in kubectl
// syntax. It refuses what kubectl's parser lets through but no one means:
// `key in ()` and `key notin ()`, which the parser reads as the one value
// "" (the label set and empty), so that `in ()` silently matches almost
// nothing and `notin ()` almost everything.
func ParseLabelSelector(flag, s string) (*metav1.LabelSelector, error) {
	sel, err := metav1.ParseToLabelSelector(s)
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", flag, s, err)
	}
	for _, r := range sel.MatchExpressions {
		if (r.Operator != metav1.LabelSelectorOpIn && r.Operator != metav1.LabelSelectorOpNotIn) || len(r.Values) != 1 || r.Values[0] != "" {
			continue
		}
		op := strings.ToLower(string(r.Operator))
		return nil, fmt.Errorf("%s %q: the requirement '%s %s ()' lists no values: give at least one, e.g. '%s %s (a,b)', or write '%s' (the label is set) or '!%s' (it is not)",
			flag, s, r.Key, op, r.Key, op, r.Key, r.Key)
	}
	return sel, nil
}
