package render

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// BenchmarkPlan renders the test template for a large fleet with an image
// override on a third of the clusters and an Allocatable division, the
// work one ManifestWorkReplicaSet reconcile does before writing.
func BenchmarkPlan(b *testing.B) {
	for _, n := range []int{1000, 5000} {
		b.Run(fmt.Sprintf("clusters=%d", n), func(b *testing.B) {
			clusters := make([]Cluster, n)
			for i := range clusters {
				clusters[i] = Cluster{
					Name:        fmt.Sprintf("cluster-%05d", i),
					Labels:      map[string]string{"region": []string{"eu", "us", "ap"}[i%3]},
					Allocatable: corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(int64(1000+i*7%5000), resource.DecimalSI)},
				}
			}
			spec := &workv1alpha1.ManifestWorkReplicaSetSpec{
				ManifestWorkTemplate: template(),
				Overrides: []workv1alpha1.ClusterOverride{{Name: "eu-image", ClusterSelector: sel("region", "eu"),
					Images: []workv1alpha1.ImageOverride{{Container: "hello", Tag: "eu"}}}},
				ReplicaDivision: &workv1alpha1.ReplicaDivision{Type: workv1alpha1.ReplicaDivisionAllocatable, TotalReplicas: ptr.To[int32](int32(3 * n))},
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := Plan(spec, clusters); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
