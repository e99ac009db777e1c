package clusterset

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
)

// emptyCondition is the ClusterSetEmpty condition of a set with members
// member clusters; selectorErr, when set, says why no member can be
// selected at all.
func emptyCondition(members int, selectorErr error, generation int64) metav1.Condition {
	c := metav1.Condition{Type: clusterv1beta2.ManagedClusterSetConditionEmpty, ObservedGeneration: generation}
	switch {
	case selectorErr != nil:
		c.Status, c.Reason = metav1.ConditionTrue, reasonInvalidSelector
		c.Message = fmt.Sprintf("No ManagedCluster can be selected: %v. Fix spec.clusterSelector.", selectorErr)
	case members == 0:
		c.Status, c.Reason = metav1.ConditionTrue, clusterv1beta2.ReasonNoClusterMatched
		c.Message = "No ManagedCluster selected"
	default:
		c.Status, c.Reason = metav1.ConditionFalse, clusterv1beta2.ReasonClustersSelected
		c.Message = fmt.Sprintf("%d ManagedClusters selected", members)
	}
	return c
}

// boundCondition is the Bound condition of binding, given whether the set
// it names exists (and is not being deleted).
func boundCondition(binding *clusterv1beta2.ManagedClusterSetBinding, setExists bool) metav1.Condition {
	c := metav1.Condition{Type: clusterv1beta2.ClusterSetBindingBoundType, ObservedGeneration: binding.Generation}
	set := binding.Spec.ClusterSet
	switch {
	case set != binding.Name:
		c.Status, c.Reason = metav1.ConditionFalse, reasonClusterSetNameMismatch
		c.Message = fmt.Sprintf("The binding is named %q but spec.clusterSet is %q: a binding must be named after the set it binds. "+
			"Delete it and create one named %q.", binding.Name, set, set)
	case !setExists:
		c.Status, c.Reason = metav1.ConditionFalse, clusterv1beta2.ReasonClusterSetNotFound
		c.Message = fmt.Sprintf("ManagedClusterSet %q does not exist", set)
	default:
		c.Status, c.Reason = metav1.ConditionTrue, clusterv1beta2.ReasonClusterSetBound
		c.Message = fmt.Sprintf("ManagedClusterSet %q is bound to namespace %s", set, binding.Namespace)
	}
	return c
}
