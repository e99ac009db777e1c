package work

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Apply ranks, lowest first: what others live in or are typed by, then who
// may do what, then configuration, then how workloads are reached, then
// the workloads, then other namespaced kinds (custom resources), and last
// what intercepts requests, which may point at a service applied earlier.
const (
	rankNamespace = iota
	rankCRD
	rankClusterScoped
	rankRBAC
	rankConfig
	rankService
	rankWorkload
	rankOther
	rankWebhook
)

var kindRanks = map[schema.GroupKind]int{
	{Kind: "Namespace"}: rankNamespace,
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}: rankCRD,
	{Kind: "ServiceAccount"}:                                rankRBAC,
	{Kind: "ConfigMap"}:                                     rankConfig,
	{Kind: "Secret"}:                                        rankConfig,
	{Kind: "ResourceQuota"}:                                 rankConfig,
	{Kind: "LimitRange"}:                                    rankConfig,
	{Kind: "PersistentVolumeClaim"}:                         rankConfig,
	{Kind: "Service"}:                                       rankService,
	{Kind: "Endpoints"}:                                     rankService,
	{Group: "discovery.k8s.io", Kind: "EndpointSlice"}:      rankService,
	{Group: "networking.k8s.io", Kind: "Ingress"}:           rankService,
	{Group: "networking.k8s.io", Kind: "NetworkPolicy"}:     rankService,
	{Kind: "Pod"}:                                           rankWorkload,
	{Kind: "ReplicationController"}:                         rankWorkload,
	{Group: "policy", Kind: "PodDisruptionBudget"}:          rankWorkload,
	{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}: rankWorkload,
	{Group: "apiregistration.k8s.io", Kind: "APIService"}:   rankWebhook,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:     rankWebhook,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}:   rankWebhook,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"}:        rankWebhook,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicyBinding"}: rankWebhook,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicy"}:          rankWebhook,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicyBinding"}:   rankWebhook,
}

// kindRank is where objects of kind gk go in the apply order; namespaced
// says whether the spoke serves the kind namespaced (unknown kinds count
// as namespaced).
func kindRank(gk schema.GroupKind, namespaced bool) int {
	if r, ok := kindRanks[gk]; ok {
		return r
	}
	switch {
	case gk.Group == "rbac.authorization.k8s.io":
		return rankRBAC
	case gk.Group == "apps" || gk.Group == "batch":
		return rankWorkload
	case !namespaced:
		return rankClusterScoped
	}
	return rankOther
}

// applyOrder returns the indexes of manifests in the order to apply them:
// by kind rank, and in the work's order within a rank.
func applyOrder(manifests []*manifest) []int {
	order := make([]int, len(manifests))
	for i := range order {
		order[i] = i
	}
	rank := func(m *manifest) int {
		gk := schema.GroupKind{Group: m.meta.Group, Kind: m.meta.Kind}
		return kindRank(gk, m.invalid != nil || m.key.Namespace != "")
	}
	slices.SortStableFunc(order, func(a, b int) int { return rank(manifests[a]) - rank(manifests[b]) })
	return order
}
