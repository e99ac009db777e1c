package work

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

func TestApplyOrder(t *testing.T) {
	m := func(group, kind, ns string) *manifest {
		return &manifest{meta: workv1.ManifestResourceMeta{Group: group, Kind: kind}, key: objectKey{Namespace: ns}}
	}
	unserved := &manifest{meta: workv1.ManifestResourceMeta{Group: "example.com", Kind: "Widget"}, invalid: errors.New("not served")}
	tests := []struct {
		name      string
		manifests []*manifest
		want      []int
	}{
		{"empty", nil, []int{}},
		{
			"the contract's order",
			[]*manifest{
				m("admissionregistration.k8s.io", "ValidatingWebhookConfiguration", ""), // 0
				m("apps", "Deployment", "app"),                                          // 1
				m("", "Service", "app"),                                                 // 2
				m("", "ConfigMap", "app"),                                               // 3
				m("rbac.authorization.k8s.io", "RoleBinding", "app"),                    // 4
				m("apiextensions.k8s.io", "CustomResourceDefinition", ""),               // 5
				m("", "Namespace", ""),                                                  // 6
				m("storage.k8s.io", "StorageClass", ""),                                 // 7
				m("", "Secret", "app"),                                                  // 8
				m("rbac.authorization.k8s.io", "ClusterRole", ""),                       // 9
				m("example.com", "Widget", "app"),                                       // 10
			},
			[]int{6, 5, 7, 4, 9, 3, 8, 2, 1, 10, 0},
		},
		{
			"the work's order within a rank",
			[]*manifest{m("", "ConfigMap", "a"), m("", "Secret", "a"), m("", "ConfigMap", "b")},
			[]int{0, 1, 2},
		},
		{
			"a kind the spoke does not serve goes with the custom resources",
			[]*manifest{unserved, m("batch", "Job", "a"), m("", "Namespace", "")},
			[]int{2, 1, 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, applyOrder(tt.manifests)); diff != "" {
				t.Errorf("applyOrder (-want +got):\n%s", diff)
			}
		})
	}
}

func TestKindRank(t *testing.T) {
	tests := []struct {
		gk         schema.GroupKind
		namespaced bool
		want       int
	}{
		{schema.GroupKind{Kind: "Namespace"}, false, rankNamespace},
		{schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}, false, rankCRD},
		{schema.GroupKind{Group: "scheduling.k8s.io", Kind: "PriorityClass"}, false, rankClusterScoped},
		{schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}, false, rankRBAC},
		{schema.GroupKind{Kind: "ServiceAccount"}, true, rankRBAC},
		{schema.GroupKind{Kind: "Secret"}, true, rankConfig},
		{schema.GroupKind{Group: "networking.k8s.io", Kind: "Ingress"}, true, rankService},
		{schema.GroupKind{Group: "apps", Kind: "StatefulSet"}, true, rankWorkload},
		{schema.GroupKind{Group: "batch", Kind: "CronJob"}, true, rankWorkload},
		{schema.GroupKind{Group: "example.com", Kind: "Widget"}, true, rankOther},
		{schema.GroupKind{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}, false, rankWebhook},
		{schema.GroupKind{Group: "apiregistration.k8s.io", Kind: "APIService"}, false, rankWebhook},
	}
	for _, tt := range tests {
		if got := kindRank(tt.gk, tt.namespaced); got != tt.want {
			t.Errorf("kindRank(%s) = %d, want %d", tt.gk, got, tt.want)
		}
	}
}
