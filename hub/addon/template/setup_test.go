package template

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/addon"
)

// TestAddOnChanged checks which updates of a ManagedClusterAddOn are a
// pass: those of what a pass reads or writes, unless they are this
// controller's own write with nothing left to do.
func TestAddOnChanged(t *testing.T) {
	base := &addonv1alpha1.ManagedClusterAddOn{
		ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: "hello", ResourceVersion: "1"},
		Status: addonv1alpha1.ManagedClusterAddOnStatus{
			ConfigReferences: []addonv1alpha1.ConfigReference{{
				ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addon.Group, Resource: addon.ConfigResourceTemplates},
				DesiredConfig:       &addonv1alpha1.ConfigSpecHash{ConfigReferent: addonv1alpha1.ConfigReferent{Name: "hello-0.1.0"}, SpecHash: "a"},
			}},
		},
	}
	condition := func(t, reason string) func(*addonv1alpha1.ManagedClusterAddOn) {
		return func(m *addonv1alpha1.ManagedClusterAddOn) {
			meta.SetStatusCondition(&m.Status.Conditions, metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: reason})
		}
	}
	for _, tc := range []struct {
		name   string
		change func(*addonv1alpha1.ManagedClusterAddOn)
		// own: the new object is this controller's last write.
		own  bool
		want bool
	}{
		{"nothing but the resource version", func(*addonv1alpha1.ManagedClusterAddOn) {}, false, false},
		{"the agent's ClusterCertificateRotated", condition(addon.ConditionClusterCertificateRotated, "ClientCertificateUpdated"), false, false},
		{"the manager's Progressing", condition(addon.ConditionProgressing, "Completed"), false, false},
		{"the agent's driver csr", func(m *addonv1alpha1.ManagedClusterAddOn) { m.Status.KubeClientDriver = addon.KubeClientDriverCSR }, false, false},
		{"the agent's driver token", func(m *addonv1alpha1.ManagedClusterAddOn) { m.Status.KubeClientDriver = "token" }, false, true},
		{"the manager's lastAppliedConfig", func(m *addonv1alpha1.ManagedClusterAddOn) {
			m.Status.ConfigReferences[0].LastAppliedConfig = m.Status.ConfigReferences[0].DesiredConfig.DeepCopy()
		}, false, false},
		{"the desired template's spec hash", func(m *addonv1alpha1.ManagedClusterAddOn) { m.Status.ConfigReferences[0].DesiredConfig.SpecHash = "b" }, false, true},
		{"the manager's Configured", condition(addon.ConditionConfigured, "ConfigurationsConfigured"), false, true},
		{"another writer's Available", condition(addon.ConditionAvailable, "ProbeAvailable"), false, true},
		{"a deletion", func(m *addonv1alpha1.ManagedClusterAddOn) { m.DeletionTimestamp = &metav1.Time{} }, false, true},
		{"this controller's own write", condition(addon.ConditionManifestApplied, ReasonManifestApplied), true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Reconciler{}
			n := base.DeepCopy()
			tc.change(n)
			n.ResourceVersion = "2"
			if tc.own {
				r.wrote.Store(types.NamespacedName{Namespace: n.Namespace, Name: n.Name}, n.ResourceVersion)
			}
			if got := r.addOnChanged().Update(event.UpdateEvent{ObjectOld: base.DeepCopy(), ObjectNew: n}); got != tc.want {
				t.Errorf("a pass: %v, want %v", got, tc.want)
			}
		})
	}
}

// TestAwaitsOwnStatus checks that a write of the kubeClient subject with
// PermissionConfigPending is followed by the pass that grants it.
func TestAwaitsOwnStatus(t *testing.T) {
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	meta.SetStatusCondition(&mca.Status.Conditions, metav1.Condition{Type: addon.ConditionRegistrationApplied, Status: metav1.ConditionFalse, Reason: ReasonPermissionConfigPending})
	if awaitsOwnStatus(mca) {
		t.Error("no subject written yet, but the pass after is awaited")
	}
	mca.Status.Registrations = []addonv1alpha1.RegistrationConfig{{SignerName: addon.KubeAPIServerClientSigner, Subject: addonv1alpha1.Subject{User: "u"}}}
	if !awaitsOwnStatus(mca) {
		t.Error("the subject is written with PermissionConfigPending, but the pass that grants it is not awaited")
	}
	meta.SetStatusCondition(&mca.Status.Conditions, metav1.Condition{Type: addon.ConditionRegistrationApplied, Status: metav1.ConditionTrue, Reason: ReasonSetPermissionApplied})
	if awaitsOwnStatus(mca) {
		t.Error("permissions granted, but another pass is awaited")
	}
}
