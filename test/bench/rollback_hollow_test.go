package main

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flotilla-io/flotilla/agent/policy/engine"
	"github.com/flotilla-io/flotilla/agent/work"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// TestReportNeverReady checks that a hollow cluster reports a Deployment
// of a neverReadyTag image with no replica available and the work Degraded
// for its generation, and one of any other image available and not
// Degraded; and that the same work is not Degraded once it is back on a
// good image (a rollback).
func TestReportNeverReady(t *testing.T) {
	deployment := func(image string) workv1.Manifest {
		return workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web",` +
			`"namespace":"ns"},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"a"}},"template":{"metadata":{"labels":{"app":"a"}},"spec":{"containers":[{"name":"c","image":"` + image + `"}]}}}}`)}}
	}
	mw := &workv1.ManifestWork{Spec: workv1.ManifestWorkSpec{
		ManifestConfigs: []workv1.ManifestConfigOption{{
			ResourceIdentifier: workv1.ResourceIdentifier{Group: "apps", Resource: "deployments", Namespace: "ns", Name: "web"},
			FeedbackRules:      []workv1.FeedbackRule{{Type: workv1.WellKnownStatusType}},
		}},
	}}
	sim := work.NewSimulator(kindMapper{kinds: engine.NewObjectSet(nil)})
	report := func(image string, generation int64) (available int64, degraded bool) {
		t.Helper()
		mw.Generation = generation
		mw.Spec.Workload.Manifests = []workv1.Manifest{deployment(image)}
		sim.SetStatus(mw, time.Now())
		reportRolledOut(mw)
		reportNeverReady(mw)
		if len(mw.Status.ResourceStatus.Manifests) != 1 {
			t.Fatalf("%s: status of %d manifests, want 1", image, len(mw.Status.ResourceStatus.Manifests))
		}
		available = -1
		for _, v := range mw.Status.ResourceStatus.Manifests[0].StatusFeedback.Values {
			if v.Name == "AvailableReplicas" && v.Value.Integer != nil {
				available = *v.Value.Integer
			}
		}
		c := meta.FindStatusCondition(mw.Status.Conditions, workv1.WorkDegraded)
		if c == nil || c.ObservedGeneration != generation {
			t.Fatalf("%s: Degraded %+v, want one for generation %d", image, c, generation)
		}
		return available, meta.IsStatusConditionTrue(mw.Status.Conditions, workv1.WorkDegraded)
	}
	for i, step := range []struct {
		image     string
		available int64
		degraded  bool
	}{
		{"registry.example/web:1.0", 2, false},
		{"registry.example/web" + neverReadyTag, 0, true},
		{"registry.example/web:1.0", 2, false},
	} {
		available, degraded := report(step.image, int64(i+1))
		if available != step.available || degraded != step.degraded {
			t.Errorf("step %d, %s: AvailableReplicas %d, Degraded %t; want %d, %t", i, step.image, available, degraded, step.available, step.degraded)
		}
	}
}
