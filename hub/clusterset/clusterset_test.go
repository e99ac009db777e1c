package clusterset

import (
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
)

func TestSelector(t *testing.T) {
	set := func(spec clusterv1beta2.ManagedClusterSelector) *clusterv1beta2.ManagedClusterSet {
		return &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: "prod"}, Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: spec}}
	}
	inProd := labels.Set{clusterv1beta2.ClusterSetLabel: "prod", "env": "prod"}
	inDev := labels.Set{clusterv1beta2.ClusterSetLabel: "dev", "env": "prod"}
	tests := []struct {
		name              string
		set               *clusterv1beta2.ManagedClusterSet
		wantProd, wantDev bool
		wantErr           bool
	}{
		{name: "empty selector type means the clusterset label", set: set(clusterv1beta2.ManagedClusterSelector{}), wantProd: true},
		{name: "ExclusiveClusterSetLabel", set: set(clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.ExclusiveClusterSetLabel}), wantProd: true},
		{name: "LabelSelector", set: set(clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.LabelSelector,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}), wantProd: true, wantDev: true},
		{name: "empty LabelSelector selects everything", set: GlobalSet(), wantProd: true, wantDev: true},
		{name: "LabelSelector without a selector selects nothing", set: set(clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.LabelSelector})},
		{name: "invalid selector", set: set(clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.LabelSelector,
			LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: "Near"}}}}), wantErr: true},
		{name: "unknown selector type", set: set(clusterv1beta2.ManagedClusterSelector{SelectorType: "Magic"}), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, err := Selector(tt.set)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v, want error %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if sel.Matches(inProd) != tt.wantProd || sel.Matches(inDev) != tt.wantDev {
				t.Errorf("matches prod member %v, dev member %v; want %v, %v", sel.Matches(inProd), sel.Matches(inDev), tt.wantProd, tt.wantDev)
			}
		})
	}
}

func TestEmptyCondition(t *testing.T) {
	tests := []struct {
		members    int
		err        error
		wantStatus metav1.ConditionStatus
		wantReason string
		wantMsg    string
	}{
		{0, nil, metav1.ConditionTrue, clusterv1beta2.ReasonNoClusterMatched, "No ManagedCluster selected"},
		{3, nil, metav1.ConditionFalse, clusterv1beta2.ReasonClustersSelected, "3 ManagedClusters selected"},
		{0, errors.New("bad selector"), metav1.ConditionTrue, reasonInvalidSelector, "No ManagedCluster can be selected: bad selector. Fix spec.clusterSelector."},
	}
	for _, tt := range tests {
		c := emptyCondition(tt.members, tt.err, 4)
		if c.Type != clusterv1beta2.ManagedClusterSetConditionEmpty || c.Status != tt.wantStatus || c.Reason != tt.wantReason || c.Message != tt.wantMsg || c.ObservedGeneration != 4 {
			t.Errorf("emptyCondition(%d, %v) = %+v", tt.members, tt.err, c)
		}
	}
}

func TestBoundCondition(t *testing.T) {
	binding := func(name, set string) *clusterv1beta2.ManagedClusterSetBinding {
		return &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: name},
			Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: set}}
	}
	tests := []struct {
		name       string
		binding    *clusterv1beta2.ManagedClusterSetBinding
		exists     bool
		wantStatus metav1.ConditionStatus
		wantReason string
	}{
		{"bound", binding("prod", "prod"), true, metav1.ConditionTrue, clusterv1beta2.ReasonClusterSetBound},
		{"set missing", binding("prod", "prod"), false, metav1.ConditionFalse, clusterv1beta2.ReasonClusterSetNotFound},
		{"named after another set", binding("alias", "prod"), true, metav1.ConditionFalse, reasonClusterSetNameMismatch},
	}
	for _, tt := range tests {
		c := boundCondition(tt.binding, tt.exists)
		if c.Type != clusterv1beta2.ClusterSetBindingBoundType || c.Status != tt.wantStatus || c.Reason != tt.wantReason {
			t.Errorf("%s: %+v", tt.name, c)
		}
	}
}

func TestRevertSpec(t *testing.T) {
	changed := GlobalSet()
	changed.Spec.ClusterSelector.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}
	if !revertSpec(changed) || len(changed.Spec.ClusterSelector.LabelSelector.MatchLabels) != 0 {
		t.Errorf("global's selector was not put back: %+v", changed.Spec)
	}
	kept := DefaultSet()
	if revertSpec(kept) {
		t.Error("an unchanged default set was reported changed")
	}
	other := DefaultSet()
	other.Name = "mine"
	other.Spec.ClusterSelector.SelectorType = clusterv1beta2.LabelSelector
	if revertSpec(other) || other.Spec.ClusterSelector.SelectorType != clusterv1beta2.LabelSelector {
		t.Error("a user's set was changed")
	}
}
