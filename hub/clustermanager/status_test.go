package clustermanager

import (
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1 "github.com/flotilla-io/flotilla/api/operator/v1"
)

func TestStatus(t *testing.T) {
	r := &Reconciler{Want: []string{"a.example.io", "b.example.io"}, Version: "v1.2.3"}
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
			s := r.status(cm, notEstablished(r.Want, tc.crds))
			applied := meta.FindStatusCondition(s.Conditions, ConditionApplied)
			if applied == nil || applied.Status != tc.wantApplied || applied.Reason != tc.wantReason {
				t.Fatalf("Applied = %+v, want %s/%s", applied, tc.wantApplied, tc.wantReason)
			}
			if s.ObservedGeneration != 3 || len(s.RelatedResources) != 2 {
				t.Errorf("observedGeneration %d, relatedResources %v", s.ObservedGeneration, s.RelatedResources)
			}
			for _, typ := range []string{ConditionProgressing, ConditionHubRegistrationDegraded, ConditionHubPlacementDegraded} {
				if !meta.IsStatusConditionFalse(s.Conditions, typ) {
					t.Errorf("%s is not False", typ)
				}
			}
		})
	}

	t.Run("a condition that holds keeps its transition time", func(t *testing.T) {
		then := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		cm := &operatorv1.ClusterManager{Status: operatorv1.ClusterManagerStatus{Conditions: []metav1.Condition{
			{Type: ConditionApplied, Status: metav1.ConditionTrue, Reason: ReasonApplied, LastTransitionTime: then},
		}}}
		s := r.status(cm, nil)
		if got := meta.FindStatusCondition(s.Conditions, ConditionApplied).LastTransitionTime; !got.Equal(&then) {
			t.Errorf("LastTransitionTime %s, want %s", got, then)
		}
	})
}
