package addon

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/addon"
	"github.com/flotilla-io/flotilla/internal/rollout"
)

func TestHubCondition(t *testing.T) {
	mca := func(conditions ...metav1.Condition) *addonv1alpha1.ManagedClusterAddOn {
		return &addonv1alpha1.ManagedClusterAddOn{
			ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: "hello"},
			Status:     addonv1alpha1.ManagedClusterAddOnStatus{Conditions: conditions},
		}
	}
	cma := &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: "hello"}}
	available := metav1.Condition{Type: addon.ConditionAvailable, Status: metav1.ConditionTrue, Reason: "ManagedClusterAddOnLeaseUpdated"}
	theirs := metav1.Condition{Type: ConditionManifestApplied, Status: metav1.ConditionTrue, Reason: "AddonManifestApplied"}
	hubs := metav1.Condition{Type: ConditionManifestApplied, Status: metav1.ConditionFalse, Reason: ReasonAddOnManagerNotRunning}
	registered := metav1.Condition{Type: addon.ConditionRegistrationApplied, Status: metav1.ConditionTrue, Reason: "NilRegistration"}

	cases := []struct {
		name              string
		mca               *addonv1alpha1.ManagedClusterAddOn
		cma               *addonv1alpha1.ClusterManagementAddOn
		managed, template bool
		wantReason        string // of ManifestApplied; "" when absent
	}{
		{name: "not declared", mca: mca(available), wantReason: ReasonClusterManagementAddOnNotFound},
		{name: "managed, no template, nothing written", mca: mca(available), cma: cma, managed: true, wantReason: ReasonAddOnManagerNotRunning},
		{name: "a template add-on is deployed by the hub", mca: mca(hubs), cma: cma, managed: true, template: true},
		{name: "a manager wrote RegistrationApplied: the hub's condition is taken back", mca: mca(hubs, registered), cma: cma, managed: true},
		{name: "a manager's ManifestApplied stays", mca: mca(theirs), cma: cma, managed: true, wantReason: "AddonManifestApplied"},
		{name: "lifecycle self: the hub's condition is taken back", mca: mca(hubs, available), cma: cma},
		{name: "lifecycle self: nothing is added", mca: mca(), cma: cma},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := hubCondition(tc.mca, tc.cma, tc.managed, tc.template)
			c := meta.FindStatusCondition(got, ConditionManifestApplied)
			switch {
			case tc.wantReason == "" && c != nil:
				t.Errorf("ManifestApplied = %+v, want none", c)
			case tc.wantReason != "" && (c == nil || c.Reason != tc.wantReason):
				t.Errorf("ManifestApplied = %+v, want reason %s", c, tc.wantReason)
			}
			for _, want := range tc.mca.Status.Conditions {
				if want.Type != ConditionManifestApplied && meta.FindStatusCondition(got, want.Type) == nil {
					t.Errorf("condition %s was dropped", want.Type)
				}
			}
		})
	}
}

func cref(name, hash, applied string) addonv1alpha1.ConfigReference {
	r := addonv1alpha1.ConfigReference{ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addon.Group, Resource: addon.ConfigResourceDeploymentConfigs},
		ConfigReferent: addonv1alpha1.ConfigReferent{Namespace: "ns", Name: name},
		DesiredConfig:  &addonv1alpha1.ConfigSpecHash{ConfigReferent: addonv1alpha1.ConfigReferent{Namespace: "ns", Name: name}, SpecHash: hash}}
	if applied != "" {
		r.LastAppliedConfig = &addonv1alpha1.ConfigSpecHash{ConfigReferent: addonv1alpha1.ConfigReferent{Namespace: "ns", Name: name}, SpecHash: applied}
	}
	return r
}

func TestWithDesiredKeepsWhatTheClusterRuns(t *testing.T) {
	cur := []addonv1alpha1.ConfigReference{cref("a", "h1", "h1")}
	got := withDesired(cur, []addonv1alpha1.ConfigReference{cref("a", "h2", "")})
	if len(got) != 1 || got[0].DesiredConfig.SpecHash != "h2" || got[0].LastAppliedConfig == nil || got[0].LastAppliedConfig.SpecHash != "h1" {
		t.Errorf("new hash: %+v", got)
	}
	got = withDesired(cur, []addonv1alpha1.ConfigReference{cref("b", "h3", "")})
	if got[0].LastAppliedConfig == nil || got[0].LastAppliedConfig.Name != "a" {
		t.Errorf("another config of the same type keeps the applied one: %+v", got)
	}
	if !sameDesired(got, []addonv1alpha1.ConfigReference{cref("b", "h3", "")}) || sameDesired(got, []addonv1alpha1.ConfigReference{cref("b", "h4", "")}) || sameDesired(got, nil) {
		t.Error("sameDesired compares names and hashes")
	}
}

func TestStateOf(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	progressing := func(reason string) metav1.Condition {
		return metav1.Condition{Type: addon.ConditionProgressing, Reason: reason, LastTransitionTime: metav1.NewTime(t0)}
	}
	desired := []addonv1alpha1.ConfigReference{cref("a", "h2", "")}
	mca := func(refs []addonv1alpha1.ConfigReference, conds ...metav1.Condition) *addonv1alpha1.ManagedClusterAddOn {
		return &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "c"},
			Status: addonv1alpha1.ManagedClusterAddOnStatus{ConfigReferences: refs, Conditions: conds}}
	}
	now := t0.Add(time.Hour)
	for _, tc := range []struct {
		name string
		mca  *addonv1alpha1.ManagedClusterAddOn
		want rollout.Cluster
	}{
		{"old configs: to apply", mca([]addonv1alpha1.ConfigReference{cref("a", "h1", "h1")}), rollout.Cluster{Name: "c"}},
		{"new configs, not applied: in flight since Progressing changed", mca([]addonv1alpha1.ConfigReference{cref("a", "h2", "h1")}, progressing("Progressing")),
			rollout.Cluster{Name: "c", Updated: true, PushedAt: t0}},
		{"new configs applied: available", mca([]addonv1alpha1.ConfigReference{cref("a", "h2", "h2")}, progressing("Completed")),
			rollout.Cluster{Name: "c", Updated: true, PushedAt: t0, Available: true, AvailableSince: t0}},
		{"failed", mca([]addonv1alpha1.ConfigReference{cref("a", "h2", "h1")}, progressing("Failed")),
			rollout.Cluster{Name: "c", Updated: true, PushedAt: t0, Degraded: true}},
		{"no Progressing yet: pushed now", mca([]addonv1alpha1.ConfigReference{cref("a", "h2", "")}), rollout.Cluster{Name: "c", Updated: true, PushedAt: now}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := stateOf(tc.mca, desired, rollout.Group{}, now); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestMirrored(t *testing.T) {
	cluster := map[string]string{addon.AnnotationPrefix + "a": "1", "other/b": "2"}
	got := mirrored(map[string]string{addon.AnnotationPrefix + "gone": "x", addon.InstallNamespaceAnnotation: "ns", "mine": "y"}, cluster)
	want := map[string]string{addon.AnnotationPrefix + "a": "1", addon.InstallNamespaceAnnotation: "ns", "mine": "y"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("got %v, want %v", got, want)
		}
	}
	if got := mirrored(nil, map[string]string{"other/b": "2"}); got != nil {
		t.Errorf("nothing to mirror: got %v", got)
	}
}

func TestFeatureValue(t *testing.T) {
	for status, want := range map[metav1.ConditionStatus]string{metav1.ConditionTrue: "available", metav1.ConditionFalse: "unhealthy", metav1.ConditionUnknown: "unreachable"} {
		mca := &addonv1alpha1.ManagedClusterAddOn{Status: addonv1alpha1.ManagedClusterAddOnStatus{Conditions: []metav1.Condition{{Type: addon.ConditionAvailable, Status: status}}}}
		if got := featureValue(mca); got != want {
			t.Errorf("%s: got %s, want %s", status, got, want)
		}
	}
	if got := featureValue(&addonv1alpha1.ManagedClusterAddOn{}); got != "unreachable" {
		t.Errorf("no Available: got %s", got)
	}
}
