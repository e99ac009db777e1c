package workview

import (
	"bytes"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// TestPendingClusterShowsWhatItsWorkHolds: in a stopped rollout, a cluster
// still Pending runs the previous spec; describe shows that one's image
// and says which it gets next.
func TestPendingClusterShowsWhatItsWorkHolds(t *testing.T) {
	now := time.Now()
	deploy := func(image string) workv1.ManifestWorkSpec {
		return specOf(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"},"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"web","image":"` + image + `"}]}}}}`)
	}
	rs := replicaSetOf(workv1alpha1.RolloutStrategy{Type: workv1alpha1.Progressive, Progressive: &workv1alpha1.RolloutProgressive{MaxConcurrency: intstr.FromInt32(1)}},
		metav1.Condition{Type: workv1alpha1.ManifestWorkReplicaSetConditionPlacementVerified, Status: metav1.ConditionTrue, Reason: workv1alpha1.ReasonAsExpected, ObservedGeneration: 2})
	rs.Spec.ManifestWorkTemplate = deploy("web:2")
	works := []workv1.ManifestWork{
		workIn("c1", deploy("web:2"), now.Add(-time.Minute), metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionTrue),
		workIn("c2", deploy("web:1"), now.Add(-time.Hour), metav1.ConditionTrue, metav1.ConditionTrue, metav1.ConditionFalse),
	}
	v := buildReplicaSetView(rs, []string{"c1", "c2", "c3"}, map[string]string{"c1": "web", "c2": "web", "c3": "web"}, nil, works, now)
	var out bytes.Buffer
	if err := WriteReplicaSetDescription(&out, v); err != nil {
		t.Fatal(err)
	}
	lines := map[string]string{}
	for _, l := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			lines[f[0]] = l
		}
	}
	if l := lines["c1"]; !strings.Contains(l, "Failed") || !strings.Contains(l, "web:2") {
		t.Errorf("c1: %q", l)
	}
	if l := lines["c2"]; !strings.Contains(l, "Pending") || !strings.Contains(l, " web:1 ") || !strings.Contains(l, "next: replicas 2, images web:2") {
		t.Errorf("c2 holds web:1 and gets web:2 next: %q", l)
	}
	if l := lines["c3"]; !strings.Contains(l, "Pending") || !strings.Contains(l, "next: replicas 2, images web:2") {
		t.Errorf("c3 has no work yet: %q", l)
	}
	for _, cd := range v.Data().Clusters {
		if cd.Cluster == "c2" && cd.Images != "web:1" {
			t.Errorf("data: c2 images %q, want web:1", cd.Images)
		}
	}
}
