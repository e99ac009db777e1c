package clusterset

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
)

// Selector returns the label selector that picks the members of set: the
// clusterset label equal to the set's name for ExclusiveClusterSetLabel
// (also when selectorType is empty), spec.clusterSelector.labelSelector for
// LabelSelector. As in OCM, a LabelSelector set without a labelSelector
// selects nothing, and one with an empty labelSelector selects everything.
func Selector(set *clusterv1beta2.ManagedClusterSet) (labels.Selector, error) {
	cs := set.Spec.ClusterSelector
	switch cs.SelectorType {
	case "", clusterv1beta2.ExclusiveClusterSetLabel:
		return labels.SelectorFromSet(labels.Set{clusterv1beta2.ClusterSetLabel: set.Name}), nil
	case clusterv1beta2.LabelSelector:
		sel, err := metav1.LabelSelectorAsSelector(cs.LabelSelector)
		if err != nil {
			return nil, fmt.Errorf("ManagedClusterSet %s: spec.clusterSelector.labelSelector: %w", set.Name, err)
		}
		return sel, nil
	}
	return nil, fmt.Errorf("ManagedClusterSet %s: spec.clusterSelector.selectorType %q is neither %s nor %s",
		set.Name, cs.SelectorType, clusterv1beta2.ExclusiveClusterSetLabel, clusterv1beta2.LabelSelector)
}

// DefaultSet is the spec of the "default" set the hub keeps.
func DefaultSet() *clusterv1beta2.ManagedClusterSet {
	return &clusterv1beta2.ManagedClusterSet{
		ObjectMeta: metav1.ObjectMeta{Name: clusterv1beta2.DefaultManagedClusterSetName},
		Spec: clusterv1beta2.ManagedClusterSetSpec{
			ClusterSelector: clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.ExclusiveClusterSetLabel},
		},
	}
}

// GlobalSet is the spec of the "global" set the hub keeps: every cluster.
func GlobalSet() *clusterv1beta2.ManagedClusterSet {
	return &clusterv1beta2.ManagedClusterSet{
		ObjectMeta: metav1.ObjectMeta{Name: clusterv1beta2.GlobalManagedClusterSetName},
		Spec: clusterv1beta2.ManagedClusterSetSpec{
			ClusterSelector: clusterv1beta2.ManagedClusterSelector{
				SelectorType:  clusterv1beta2.LabelSelector,
				LabelSelector: &metav1.LabelSelector{},
			},
		},
	}
}

// keptSets are the sets the hub keeps, by name.
var keptSets = map[string]func() *clusterv1beta2.ManagedClusterSet{
	clusterv1beta2.DefaultManagedClusterSetName: DefaultSet,
	clusterv1beta2.GlobalManagedClusterSetName:  GlobalSet,
}
