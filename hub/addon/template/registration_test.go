package template

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/internal/addon"
)

func TestDesiredRegistrations(t *testing.T) {
	def := addonv1alpha1.Subject{User: "system:open-cluster-management:cluster:c1:addon:hello:agent:hello-agent", Groups: addon.AgentGroups("c1", "hello")}
	custom := &addonv1alpha1.Subject{User: "custom", OrganizationUnits: []string{"ou"}}
	tp := &addonv1alpha1.AddOnTemplate{Spec: addonv1alpha1.AddOnTemplateSpec{Registration: []addonv1alpha1.RegistrationSpec{
		{Type: "KubeClient"},
		{Type: "CustomSigner", CustomSigner: &addonv1alpha1.CustomSignerRegistrationConfig{SignerName: "example.com/a"}},
		{Type: "CustomSigner", CustomSigner: &addonv1alpha1.CustomSignerRegistrationConfig{SignerName: "example.com/b", Subject: custom}},
	}}}
	mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: "hello"}}
	want := []addonv1alpha1.RegistrationConfig{
		{SignerName: addon.KubeAPIServerClientSigner, Subject: def},
		{SignerName: "example.com/a", Subject: def},
		{SignerName: "example.com/b", Subject: *custom},
	}
	if diff := cmp.Diff(want, desiredRegistrations(mca, tp)); diff != "" {
		t.Errorf("registrations (-want +got):\n%s", diff)
	}
	// An agent with the token driver keeps the subject it wrote; with csr the default returns.
	mca.Status.Registrations = []addonv1alpha1.RegistrationConfig{{SignerName: addon.KubeAPIServerClientSigner, Subject: addonv1alpha1.Subject{User: "system:serviceaccount:x:y"}}}
	mca.Status.KubeClientDriver = "token"
	if got := desiredRegistrations(mca, tp)[0].Subject.User; got != "system:serviceaccount:x:y" {
		t.Errorf("token driver: user = %s", got)
	}
	mca.Status.KubeClientDriver = addon.KubeClientDriverCSR
	if got := desiredRegistrations(mca, tp)[0].Subject.User; got != def.User {
		t.Errorf("csr driver: user = %s", got)
	}
}

func TestBinding(t *testing.T) {
	mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: "hello", UID: "u1"}}
	subject := addonv1alpha1.Subject{User: "u", Groups: append(addon.AgentGroups("c1", "hello"), addon.AuthenticatedGroup)}
	cur := binding(mca, addonv1alpha1.HubPermissionConfig{Type: "CurrentCluster", CurrentCluster: &addonv1alpha1.CurrentClusterBindingConfig{ClusterRoleName: "hello-hub"}}, subject)
	want := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: "open-cluster-management:hello:clusterrole:agent",
			Labels:          map[string]string{addon.AddOnNameLabel: "hello", addon.TemplateNameLabel: ""},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "addon.open-cluster-management.io/v1alpha1", Kind: "ManagedClusterAddOn", Name: "hello", UID: "u1"}}},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "hello-hub"},
		Subjects: []rbacv1.Subject{
			{APIGroup: rbacv1.GroupName, Kind: "User", Name: "u"},
			{APIGroup: rbacv1.GroupName, Kind: "Group", Name: "system:open-cluster-management:cluster:c1:addon:hello"},
		},
	}
	if diff := cmp.Diff(want, cur); diff != "" {
		t.Errorf("CurrentCluster binding (-want +got):\n%s", diff)
	}
	single := binding(mca, addonv1alpha1.HubPermissionConfig{Type: "SingleNamespace", SingleNamespace: &addonv1alpha1.SingleNamespaceBindingConfig{
		Namespace: "shared", RoleRef: addonv1alpha1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "reader"}}}, subject)
	if single.Namespace != "shared" || single.Name != "open-cluster-management:hello:role:agent" || len(single.OwnerReferences) != 0 ||
		!cmp.Equal(single.Subjects, []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "Group", Name: "system:open-cluster-management:addon:hello"}}) {
		t.Errorf("SingleNamespace binding = %+v", single)
	}
	if binding(mca, addonv1alpha1.HubPermissionConfig{Type: "CurrentCluster"}, subject) != nil {
		t.Error("a permission without its config made a binding")
	}
}

func TestManifestApplied(t *testing.T) {
	deploy := []*workv1.ManifestWork{{ObjectMeta: metav1.ObjectMeta{Name: "addon-hello-deploy-0"}}}
	work := func(gen, observed int64, status metav1.ConditionStatus) map[string]*workv1.ManifestWork {
		w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Name: "addon-hello-deploy-0", Generation: gen}}
		w.Status.Conditions = []metav1.Condition{{Type: workv1.WorkApplied, Status: status, ObservedGeneration: observed, Message: "boom"}}
		return map[string]*workv1.ManifestWork{w.Name: w}
	}
	for _, tc := range []struct {
		name    string
		deploy  []*workv1.ManifestWork
		works   map[string]*workv1.ManifestWork
		written map[string]bool
		status  metav1.ConditionStatus
		reason  string
	}{
		{"no manifests", nil, nil, nil, metav1.ConditionTrue, ReasonManifestApplied},
		{"new work, no status", deploy, nil, nil, metav1.ConditionTrue, ReasonManifestApplied},
		{"applied", deploy, work(2, 2, metav1.ConditionTrue), nil, metav1.ConditionTrue, ReasonManifestApplied},
		{"not applied", deploy, work(2, 2, metav1.ConditionFalse), nil, metav1.ConditionFalse, ReasonManifestAppliedFailed},
		{"a False of an older generation is stale", deploy, work(3, 2, metav1.ConditionFalse), nil, metav1.ConditionTrue, ReasonManifestApplied},
		{"just written", deploy, work(2, 2, metav1.ConditionFalse), map[string]bool{"addon-hello-deploy-0": true}, metav1.ConditionTrue, ReasonManifestApplied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, reason, msg := manifestApplied(tc.deploy, tc.works, tc.written)
			if status != tc.status || reason != tc.reason {
				t.Errorf("ManifestApplied = %s %s (%s), want %s %s", status, reason, msg, tc.status, tc.reason)
			}
		})
	}
}
