package clustermanager

import (
	"slices"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1 "github.com/flotilla-io/flotilla/api/operator/v1"
)

func TestStatus(t *testing.T) {
	r := &Reconciler{Want: []string{"a.example.io", "b.example.io"}, Options: Options{Version: "v1.2.3", Namespace: "hub-ns"}}
	established := func(name string, ok bool) apiextensionsv1.CustomResourceDefinition {
		status := apiextensionsv1.ConditionFalse
		if ok {
			status = apiextensionsv1.ConditionTrue
		}
		return apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Status:     apiextensionsv1.CustomResourceDefinitionStatus{Conditions: []apiextensionsv1.CustomResourceDefinitionCondition{{Type: apiextensionsv1.Established, Status: status}}},
		}
	}
	cases := []struct {
		name        string
		crds        []apiextensionsv1.CustomResourceDefinition
		wantApplied metav1.ConditionStatus
		wantReason  string
	}{
		{"every CRD established", []apiextensionsv1.CustomResourceDefinition{established("a.example.io", true), established("b.example.io", true)}, metav1.ConditionTrue, ReasonApplied},
		{"one not established", []apiextensionsv1.CustomResourceDefinition{established("a.example.io", true), established("b.example.io", false)}, metav1.ConditionFalse, ReasonCRDsNotEstablished},
		{"one missing", []apiextensionsv1.CustomResourceDefinition{established("a.example.io", true)}, metav1.ConditionFalse, ReasonCRDsNotEstablished},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cm := &operatorv1.ClusterManager{ObjectMeta: metav1.ObjectMeta{Generation: 3}}
			s := r.status(cm, notEstablished(r.Want, tc.crds), true)
			applied := meta.FindStatusCondition(s.Conditions, ConditionApplied)
			if applied == nil || applied.Status != tc.wantApplied || applied.Reason != tc.wantReason {
				t.Fatalf("Applied = %+v, want %s/%s", applied, tc.wantApplied, tc.wantReason)
			}
			if s.ObservedGeneration != 3 || len(s.RelatedResources) != 2+len(componentNames) {
				t.Errorf("observedGeneration %d, relatedResources %v", s.ObservedGeneration, s.RelatedResources)
			}
			for _, typ := range []string{ConditionProgressing, ConditionHubRegistrationDegraded, ConditionHubPlacementDegraded} {
				if !meta.IsStatusConditionFalse(s.Conditions, typ) {
					t.Errorf("%s is not False", typ)
				}
			}
		})
	}

	t.Run("every component clusteradm reads is named, none as a Deployment", func(t *testing.T) {
		s := r.status(&operatorv1.ClusterManager{}, nil, true)
		for _, name := range []string{"cluster-manager-registration-controller", "cluster-manager-registration-webhook",
			"cluster-manager-work-controller", "cluster-manager-work-webhook", "cluster-manager-placement-controller",
			"cluster-manager-addon-manager-controller"} {
			i := slices.IndexFunc(s.RelatedResources, func(m operatorv1.RelatedResourceMeta) bool { return m.Name == name })
			if i < 0 {
				t.Errorf("no related resource %s: clusteradm get hub-info fails with 'resource name may not be empty'", name)
				continue
			}
			if got := s.RelatedResources[i]; got.Resource != "leases" || got.Namespace != "hub-ns" {
				t.Errorf("%s: %+v, want a Lease in hub-ns", name, got)
			}
		}
	})

	t.Run("a closed join path is a False JoinPathOpen that says how to open it", func(t *testing.T) {
		s := r.status(&operatorv1.ClusterManager{}, nil, false)
		c := meta.FindStatusCondition(s.Conditions, ConditionJoinPathOpen)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != ReasonBootstrapRoleMissing || !strings.Contains(c.Message, "flotilla init") {
			t.Errorf("JoinPathOpen = %+v", c)
		}
		if !meta.IsStatusConditionTrue(r.status(&operatorv1.ClusterManager{}, nil, true).Conditions, ConditionJoinPathOpen) {
			t.Error("an open join path: JoinPathOpen is not True")
		}
	})

	t.Run("a condition that holds keeps its transition time", func(t *testing.T) {
		then := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		cm := &operatorv1.ClusterManager{Status: operatorv1.ClusterManagerStatus{Conditions: []metav1.Condition{
			{Type: ConditionApplied, Status: metav1.ConditionTrue, Reason: ReasonApplied, LastTransitionTime: then},
		}}}
		s := r.status(cm, nil, true)
		if got := meta.FindStatusCondition(s.Conditions, ConditionApplied).LastTransitionTime; !got.Equal(&then) {
			t.Errorf("LastTransitionTime %s, want %s", got, then)
		}
	})
}

// TestAddOnManagement: the spec says the add-on manager runs, and the
// Disable an older hub wrote is taken back, not a spec of the hub's users.
func TestAddOnManagement(t *testing.T) {
	gates := newClusterManager().Spec.AddOnManagerConfiguration.FeatureGates
	if !slices.Equal(gates, []operatorv1.FeatureGate{{Feature: "AddonManagement", Mode: "Enable"}}) {
		t.Errorf("a new ClusterManager's add-on manager gates %v, want AddonManagement Enable", gates)
	}
	ours := map[string]string{"app.kubernetes.io/managed-by": "flotilla"}
	disabled := &operatorv1.AddOnManagerConfiguration{FeatureGates: []operatorv1.FeatureGate{{Feature: "AddonManagement", Mode: "Disable"}}}
	for _, tc := range []struct {
		name   string
		labels map[string]string
		config *operatorv1.AddOnManagerConfiguration
		want   bool
	}{
		{"an older hub's Disable", ours, disabled, true},
		{"Enable", ours, newClusterManager().Spec.AddOnManagerConfiguration, false},
		{"no configuration", ours, nil, false},
		{"a user's object", nil, disabled, false},
		{"a user's further gates", ours, &operatorv1.AddOnManagerConfiguration{FeatureGates: append(slices.Clone(disabled.FeatureGates), operatorv1.FeatureGate{Feature: "Foo", Mode: "Enable"})}, false},
	} {
		cm := &operatorv1.ClusterManager{ObjectMeta: metav1.ObjectMeta{Labels: tc.labels}, Spec: operatorv1.ClusterManagerSpec{AddOnManagerConfiguration: tc.config}}
		if got := staleAddOnGate(cm); got != tc.want {
			t.Errorf("%s: staleAddOnGate %v, want %v", tc.name, got, tc.want)
		}
	}
}
