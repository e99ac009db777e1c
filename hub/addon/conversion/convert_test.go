package conversion

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	addonv1beta1 "github.com/flotilla-io/flotilla/api/addon/v1beta1"
	"github.com/flotilla-io/flotilla/internal/addon"
)

func convertTo[Out any](t *testing.T, in any, to string) *Out {
	t.Helper()
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Convert(raw, to)
	if err != nil {
		t.Fatalf("Convert to %s: %v", to, err)
	}
	out := new(Out)
	if err := json.Unmarshal(got, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func alphaMCA() *addonv1alpha1.ManagedClusterAddOn {
	return &addonv1alpha1.ManagedClusterAddOn{
		TypeMeta:   metav1.TypeMeta{APIVersion: alpha, Kind: "ManagedClusterAddOn"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "cluster1", Name: "helloworld", Annotations: map[string]string{"keep": "me"}},
		Spec:       addonv1alpha1.ManagedClusterAddOnSpec{InstallNamespace: "hello-ns"},
		Status: addonv1alpha1.ManagedClusterAddOnStatus{
			Namespace:        "hello-ns",
			KubeClientDriver: "csr",
			Registrations: []addonv1alpha1.RegistrationConfig{
				{SignerName: kubeClientSigner, Subject: addonv1alpha1.Subject{User: "u", Groups: []string{"g"}}},
				{SignerName: "example.com/signer", Subject: addonv1alpha1.Subject{User: "v", OrganizationUnits: []string{"ou"}}},
			},
			ConfigReferences: []addonv1alpha1.ConfigReference{{
				ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addon.Group, Resource: "addondeploymentconfigs"},
				ConfigReferent:      addonv1alpha1.ConfigReferent{Namespace: "default", Name: "adc"},
				DesiredConfig:       &addonv1alpha1.ConfigSpecHash{ConfigReferent: addonv1alpha1.ConfigReferent{Namespace: "default", Name: "adc"}, SpecHash: "h"},
			}},
		},
	}
}

func TestManagedClusterAddOnToBeta(t *testing.T) {
	b := convertTo[addonv1beta1.ManagedClusterAddOn](t, alphaMCA(), beta)
	if b.APIVersion != beta {
		t.Errorf("apiVersion %q", b.APIVersion)
	}
	if b.Annotations[addon.InstallNamespaceAnnotation] != "hello-ns" || b.Annotations["keep"] != "me" {
		t.Errorf("annotations %v: want the install namespace and the others kept", b.Annotations)
	}
	want := []addonv1beta1.RegistrationConfig{
		{Type: "kubeClient", KubeClient: &addonv1beta1.KubeClientConfig{Subject: addonv1beta1.KubeClientSubject{User: "u", Groups: []string{"g"}}, Driver: "csr"}},
		{Type: "customSigner", CustomSigner: &addonv1beta1.CustomSignerConfig{SignerName: "example.com/signer", Subject: &addonv1beta1.Subject{User: "v", OrganizationUnits: []string{"ou"}}}},
	}
	if !equality.Semantic.DeepEqual(b.Status.Registrations, want) {
		t.Errorf("registrations %+v, want %+v", b.Status.Registrations, want)
	}
	if len(b.Status.ConfigReferences) != 1 || b.Status.ConfigReferences[0].DesiredConfig.SpecHash != "h" {
		t.Errorf("config references %+v", b.Status.ConfigReferences)
	}
}

func TestManagedClusterAddOnRoundTrip(t *testing.T) {
	in := alphaMCA()
	b := convertTo[addonv1beta1.ManagedClusterAddOn](t, in, beta)
	back := convertTo[addonv1alpha1.ManagedClusterAddOn](t, b, alpha)
	if !equality.Semantic.DeepEqual(back, in) {
		t.Errorf("v1alpha1 → v1beta1 → v1alpha1 changed the object:\n got %+v\nwant %+v", back, in)
	}
	// And from v1beta1: the annotation is the install namespace, and goes.
	if _, ok := back.Annotations[addon.InstallNamespaceAnnotation]; ok {
		t.Errorf("the v1alpha1 view shows the install-namespace annotation")
	}
}

func TestClusterManagementAddOnRoundTrip(t *testing.T) {
	in := &addonv1alpha1.ClusterManagementAddOn{
		TypeMeta:   metav1.TypeMeta{APIVersion: alpha, Kind: "ClusterManagementAddOn"},
		ObjectMeta: metav1.ObjectMeta{Name: "helloworld"},
		Spec: addonv1alpha1.ClusterManagementAddOnSpec{
			AddOnMeta: addonv1alpha1.AddOnMeta{DisplayName: "Hello"},
			SupportedConfigs: []addonv1alpha1.ConfigMeta{
				{ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addon.Group, Resource: "addondeploymentconfigs"},
					DefaultConfig: &addonv1alpha1.ConfigReferent{Namespace: "default", Name: "adc"}},
				{ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addon.Group, Resource: "addontemplates"}},
			},
			InstallStrategy: addonv1alpha1.InstallStrategy{Type: addonv1alpha1.AddonInstallStrategyManual},
		},
		Status: addonv1alpha1.ClusterManagementAddOnStatus{DefaultConfigReferences: []addonv1alpha1.DefaultConfigReference{{
			ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Resource: "x"}}}},
	}
	b := convertTo[addonv1beta1.ClusterManagementAddOn](t, in, beta)
	want := []addonv1alpha1.AddOnConfig{
		{ConfigGroupResource: in.Spec.SupportedConfigs[0].ConfigGroupResource, ConfigReferent: addonv1alpha1.ConfigReferent{Namespace: "default", Name: "adc"}},
		{ConfigGroupResource: in.Spec.SupportedConfigs[1].ConfigGroupResource, ConfigReferent: addonv1alpha1.ConfigReferent{Name: noDefault}},
	}
	if !equality.Semantic.DeepEqual(b.Spec.DefaultConfigs, want) {
		t.Errorf("defaultConfigs %+v, want %+v", b.Spec.DefaultConfigs, want)
	}
	if len(b.Status.DefaultConfigReferences) != 1 {
		t.Errorf("status.defaultConfigReferences %+v", b.Status.DefaultConfigReferences)
	}
	back := convertTo[addonv1alpha1.ClusterManagementAddOn](t, b, alpha)
	if !equality.Semantic.DeepEqual(back, in) {
		t.Errorf("round trip changed the object:\n got %+v\nwant %+v", back, in)
	}
}

func TestConvertRefuses(t *testing.T) {
	for name, c := range map[string]struct{ raw, to string }{
		"another group":   {`{"apiVersion":"v1","kind":"ConfigMap"}`, beta},
		"another version": {`{"apiVersion":"` + alpha + `","kind":"ManagedClusterAddOn"}`, "addon.open-cluster-management.io/v2"},
		"another kind":    {`{"apiVersion":"` + alpha + `","kind":"AddOnTemplate"}`, beta},
		"not json":        {`{`, beta},
	} {
		if _, err := Convert([]byte(c.raw), c.to); err == nil {
			t.Errorf("%s: converted", name)
		}
	}
}
