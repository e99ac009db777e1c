package main

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flotilla-io/flotilla/agent/policy/engine"
	"github.com/flotilla-io/flotilla/agent/work"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// TestReportRolledOut checks that a hollow cluster reports, for the
// template add-on's Deployment, the well-known feedback the hub's health
// check reads (ReadyReplicas), and nothing for a Deployment no rule asks
// about.
func TestReportRolledOut(t *testing.T) {
	deployment := func(name string) workv1.Manifest {
		return workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"` + name +
			`","namespace":"ns"},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"a"}},"template":{"metadata":{"labels":{"app":"a"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`)}}
	}
	mw := &workv1.ManifestWork{Spec: workv1.ManifestWorkSpec{
		Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{deployment("probed"), deployment("other")}},
		ManifestConfigs: []workv1.ManifestConfigOption{{
			ResourceIdentifier: workv1.ResourceIdentifier{Group: "apps", Resource: "deployments", Namespace: "ns", Name: "probed"},
			FeedbackRules:      []workv1.FeedbackRule{{Type: workv1.WellKnownStatusType}},
		}},
	}}
	sim := work.NewSimulator(kindMapper{kinds: engine.NewObjectSet(nil)})
	sim.SetStatus(mw, time.Now())
	reportRolledOut(mw)
	got := map[string][]workv1.FeedbackValue{}
	for _, m := range mw.Status.ResourceStatus.Manifests {
		got[m.ResourceMeta.Name] = m.StatusFeedback.Values
	}
	if len(got) != 2 {
		t.Fatalf("status of %d manifests, want 2: %+v", len(got), mw.Status.ResourceStatus)
	}
	ready := false
	for _, v := range got["probed"] {
		if v.Name == "ReadyReplicas" && v.Value.Integer != nil && *v.Value.Integer == 2 {
			ready = true
		}
	}
	if !ready {
		t.Errorf("probed Deployment: feedback %+v, want ReadyReplicas 2", got["probed"])
	}
	if len(got["other"]) != 0 {
		t.Errorf("Deployment without a feedback rule: feedback %+v, want none", got["other"])
	}
}
