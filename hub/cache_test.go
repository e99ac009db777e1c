package hub

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
)

// The hub's cache drops managed fields, but for the PlacementDecisions'
// that the replica-set controller reads.
func TestCacheOptionsManagedFields(t *testing.T) {
	opts := cacheOptions()
	fields := []metav1.ManagedFieldsEntry{{Manager: "agent", Operation: metav1.ManagedFieldsOperationUpdate}}
	managedFieldsAfter := func(tf toolscache.TransformFunc, o metav1.Object) []metav1.ManagedFieldsEntry {
		t.Helper()
		o.SetManagedFields(fields)
		out, err := tf(o)
		if err != nil {
			t.Fatal(err)
		}
		return out.(metav1.Object).GetManagedFields()
	}

	if got := managedFieldsAfter(opts.DefaultTransform, &clusterv1.ManagedCluster{}); got != nil {
		t.Errorf("a cached ManagedCluster keeps managed fields %v", got)
	}
	var decisions toolscache.TransformFunc
	for o, c := range opts.ByObject {
		if _, ok := o.(*clusterv1beta1.PlacementDecision); ok {
			decisions = c.Transform
		}
	}
	if decisions == nil {
		t.Fatal("PlacementDecisions take the default transform")
	}
	if got := managedFieldsAfter(decisions, &clusterv1beta1.PlacementDecision{}); len(got) != 1 {
		t.Errorf("a cached PlacementDecision lost its managed fields: %v", got)
	}
}
