package work

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// TestSimulatorSetStatus checks that a simulated pass reports each
// manifest as the agent does once applied (or read) and available, fails
// a kind the cluster does not serve, rolls the work up, and keeps
// transition times across passes.
func TestSimulatorSetStatus(t *testing.T) {
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), meta.RESTScopeNamespace)
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns"}, Data: map[string]string{"k": "v"}}
	work := &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "cluster", Generation: 3},
		Spec: workv1.ManifestWorkSpec{
			Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{
				{RawExtension: runtime.RawExtension{Object: cm}},
				{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"Nope","metadata":{"name":"x"}}`)}},
			}},
			ManifestConfigs: []workv1.ManifestConfigOption{{
				ResourceIdentifier: workv1.ResourceIdentifier{Resource: "configmaps", Namespace: "ns", Name: "c"},
				UpdateStrategy:     &workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeReadOnly},
			}},
		},
	}
	sim := NewSimulator(mapper)
	first := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	sim.SetStatus(work, first)

	ms := work.Status.ResourceStatus.Manifests
	if len(ms) != 2 {
		t.Fatalf("got %d manifest statuses, want 2", len(ms))
	}
	if got := ms[0].ResourceMeta; got.Resource != "configmaps" || got.Name != "c" || got.Namespace != "ns" || got.Ordinal != 0 {
		t.Errorf("manifest 0 is %+v", got)
	}
	applied := meta.FindStatusCondition(ms[0].Conditions, workv1.ManifestApplied)
	if applied == nil || applied.Status != metav1.ConditionTrue || applied.Message != "Read only: the object is read, never written" || applied.ObservedGeneration != 3 {
		t.Errorf("manifest 0 Applied is %+v", applied)
	}
	if !meta.IsStatusConditionTrue(ms[0].Conditions, workv1.ManifestAvailable) {
		t.Errorf("manifest 0 is not Available: %+v", ms[0].Conditions)
	}
	// A kind the cluster does not serve fails as on a real cluster.
	if meta.IsStatusConditionTrue(ms[1].Conditions, workv1.ManifestApplied) {
		t.Errorf("manifest 1, of an unknown kind, is Applied: %+v", ms[1].Conditions)
	}
	if c := meta.FindStatusCondition(work.Status.Conditions, workv1.WorkApplied); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("work Applied is %+v, want False", c)
	}

	// Without the failing manifest, a later pass keeps Available's time.
	work.Spec.Workload.Manifests = work.Spec.Workload.Manifests[:1]
	sim.SetStatus(work, first.Add(time.Minute))
	later := first.Add(2 * time.Minute)
	sim.SetStatus(work, later)
	c := meta.FindStatusCondition(work.Status.Conditions, workv1.WorkApplied)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != workv1.ReasonAppliedManifestWorkComplete {
		t.Fatalf("work Applied is %+v", c)
	}
	if !c.LastTransitionTime.Time.Equal(first.Add(time.Minute)) {
		t.Errorf("Applied changed at %s, want %s", c.LastTransitionTime, first.Add(time.Minute))
	}
	if a := meta.FindStatusCondition(work.Status.ResourceStatus.Manifests[0].Conditions, workv1.ManifestAvailable); !a.LastTransitionTime.Time.Equal(first) {
		t.Errorf("manifest Available changed at %s, want %s", a.LastTransitionTime, first)
	}
}
