package addon

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
)

func TestDesiredConditions(t *testing.T) {
	mca := func(conditions ...metav1.Condition) *addonv1alpha1.ManagedClusterAddOn {
		return &addonv1alpha1.ManagedClusterAddOn{
			ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: "hello"},
			Status:     addonv1alpha1.ManagedClusterAddOnStatus{Conditions: conditions},
		}
	}
	declared := &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: "hello"}}
	self := &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: "hello", Annotations: map[string]string{LifecycleAnnotation: LifecycleSelf}}}
	available := metav1.Condition{Type: "Available", Status: metav1.ConditionTrue, Reason: "ManagedClusterAddOnLeaseUpdated"}
	theirs := metav1.Condition{Type: ConditionManifestApplied, Status: metav1.ConditionTrue, Reason: "AddonManifestApplied"}
	hubs := metav1.Condition{Type: ConditionManifestApplied, Status: metav1.ConditionFalse, Reason: ReasonAddOnManagerNotRunning}

	cases := []struct {
		name       string
		mca        *addonv1alpha1.ManagedClusterAddOn
		cma        *addonv1alpha1.ClusterManagementAddOn
		wantReason string // of ManifestApplied; "" when absent
		keep       []string
	}{
		{name: "declared, no manager", mca: mca(available), cma: declared, wantReason: ReasonAddOnManagerNotRunning, keep: []string{"Available"}},
		{name: "not declared", mca: mca(), wantReason: ReasonClusterManagementAddOnNotFound},
		{name: "run by its own manager: the hub's condition is taken back", mca: mca(hubs, available), cma: self, keep: []string{"Available"}},
		{name: "run by its own manager: its condition stays", mca: mca(theirs), cma: self, wantReason: "AddonManifestApplied"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := desiredConditions(tc.mca, tc.cma)
			c := meta.FindStatusCondition(got, ConditionManifestApplied)
			switch {
			case tc.wantReason == "" && c != nil:
				t.Errorf("ManifestApplied = %+v, want none", c)
			case tc.wantReason != "" && (c == nil || c.Reason != tc.wantReason):
				t.Errorf("ManifestApplied = %+v, want reason %s", c, tc.wantReason)
			}
			for _, k := range tc.keep {
				if meta.FindStatusCondition(got, k) == nil {
					t.Errorf("condition %s was dropped", k)
				}
			}
		})
	}
}
