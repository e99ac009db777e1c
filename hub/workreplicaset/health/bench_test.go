package health

import (
	"testing"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// BenchmarkCheck is one cluster's gate with feedback checks and an
// expression over a work of three manifests: the hub runs it for every
// cluster of a replica set at each pass.
func BenchmarkCheck(b *testing.B) {
	c := NewChecker()
	hc := &workv1alpha1.HealthCheck{Feedback: capacity, Expression: "values.AvailableReplicas == values.Replicas && values.updatedReplicas == values.Replicas"}
	w := work(2, manifest(cmMeta), fullyUp(webMeta), fullyUp(cacheMeta))
	b.ReportAllocs()
	for b.Loop() {
		if r := c.Check(hc, w); !r.Healthy {
			b.Fatal(r.Message)
		}
	}
}

// BenchmarkValidate is the admission of a replica set with that health
// check, its expression compiled before.
func BenchmarkValidate(b *testing.B) {
	c := NewChecker()
	hc := &workv1alpha1.HealthCheck{Feedback: capacity, Expression: "values.AvailableReplicas == values.Replicas && values.updatedReplicas == values.Replicas"}
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Validate(hc); err != nil {
			b.Fatal(err)
		}
	}
}
