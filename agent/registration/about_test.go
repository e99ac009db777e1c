package registration

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestServedAboutResource(t *testing.T) {
	crd := func(established bool, versions ...apiextensionsv1.CustomResourceDefinitionVersion) *apiextensionsv1.CustomResourceDefinition {
		c := &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: aboutCRDName},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: "about.k8s.io", Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "clusterproperties"}, Versions: versions,
			},
		}
		if established {
			c.Status.Conditions = []apiextensionsv1.CustomResourceDefinitionCondition{{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue}}
		}
		return c
	}
	version := func(name string, served bool) apiextensionsv1.CustomResourceDefinitionVersion {
		return apiextensionsv1.CustomResourceDefinitionVersion{Name: name, Served: served}
	}
	deleting := crd(true, version("v1beta1", true))
	deleting.DeletionTimestamp = &metav1.Time{}
	for _, tc := range []struct {
		name string
		crd  *apiextensionsv1.CustomResourceDefinition
		want string
	}{
		{"no CRD", nil, ""},
		{"not established yet", crd(false, version("v1beta1", true)), ""},
		{"being deleted", deleting, ""},
		{"v1beta1 alone, as the SIG's kubebuilder CRD", crd(true, version("v1beta1", true)), "v1beta1"},
		{"both, as the SIG's generated CRD and Flotilla's", crd(true, version("v1alpha1", true), version("v1beta1", true)), "v1beta1"},
		{"v1alpha1 alone, as the SIG's first releases", crd(true, version("v1alpha1", true)), "v1alpha1"},
		{"v1beta1 no longer served", crd(true, version("v1alpha1", true), version("v1beta1", false)), "v1alpha1"},
		{"a version the agent does not know", crd(true, version("v2", true)), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gvr, served := servedAboutResource(tc.crd)
			if got := gvr.Version; got != tc.want || served != (tc.want != "") {
				t.Fatalf("served %t at %q, want %q", served, got, tc.want)
			}
			if served && (gvr.Group != "about.k8s.io" || gvr.Resource != "clusterproperties") {
				t.Errorf("resource %v", gvr)
			}
		})
	}
}
