package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/api/multicluster/v1alpha1"
)

// neutralChosen returns, for Eventually, the sorted ClusterProfile names
// that the neutral PlacementDecisions of a placement hold.
func neutralChosen(ctx context.Context, ns, name string) func() []string {
	return func() []string {
		list := &multiclusterv1alpha1.PlacementDecisionList{}
		Expect(hubCP.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{multiclusterv1alpha1.DecisionKeyLabel: name})).To(Succeed())
		out := []string{}
		for _, pd := range list.Items {
			for _, d := range pd.Decisions {
				out = append(out, d.ClusterProfileRef.Name)
			}
		}
		slices.Sort(out)
		return out
	}
}

// duckTypedClusters reads decisions as Argo CD's clusterDecisionResource
// generator does, from what its ConfigMap says (apiVersion, kind,
// statusListKey, matchKey), with nothing of our types: the resource is
// the ConfigMap's kind as it is, the list is in namespace ns selected by
// the generator's labelSelector, and the clusters are
// status.<statusListKey>[] items' <matchKey>, a string. It also returns
// the other fields of the items whose values are not strings: the
// generator hands every field to its templates as a string, and releases
// of Argo CD without the fix of argoproj/argo-cd#27264 fail on any other.
func duckTypedClusters(ctx context.Context, dyn dynamic.Interface, cm map[string]string, ns, selector string) (clusters, nonString []string, err error) {
	group, version, ok := strings.Cut(cm["apiVersion"], "/")
	if !ok || cm["kind"] == "" {
		return nil, nil, fmt.Errorf("bad ConfigMap %v", cm)
	}
	list, err := dyn.Resource(schema.GroupVersionResource{Group: group, Version: version, Resource: cm["kind"]}).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, nil, err
	}
	out := []string{}
	for _, item := range list.Items {
		status, ok := item.Object["status"].(map[string]any)
		if !ok || len(status) == 0 {
			continue
		}
		decisions, ok := status[cm["statusListKey"]].([]any)
		if !ok {
			return nil, nil, fmt.Errorf("%s: status.%s is not a list", item.GetName(), cm["statusListKey"])
		}
		for _, d := range decisions {
			m, ok := d.(map[string]any)
			if !ok {
				return nil, nil, fmt.Errorf("%s: a decision is not an object", item.GetName())
			}
			for k, v := range m {
				if _, ok := v.(string); !ok && !slices.Contains(nonString, k) {
					nonString = append(nonString, k)
				}
			}
			if name, _ := m[cm["matchKey"]].(string); name != "" {
				out = append(out, name)
			}
		}
	}
	slices.Sort(out)
	return out, nonString, nil
}

var _ = Describe("Neutral PlacementDecisions", func() {
	It("hold the clusters of the Placement's OCM decisions, as ClusterProfiles, sliced, labelled and owned", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "neutral")
		var clusters []string
		for i := range 3 {
			c := newClusterName(fmt.Sprintf("neutral-%d", i))
			createMember(ctx, c, set, member{})
			clusters = append(clusters, c)
		}
		createPlacement(ctx, ns, "two", clusterv1beta1.PlacementSpec{NumberOfClusters: ptr.To[int32](2)})
		Eventually(chosen(ctx, ns, "two")).Should(HaveLen(2))

		By("the same clusters in the neutral kind")
		Eventually(neutralChosen(ctx, ns, "two")).Should(Equal(chosen(ctx, ns, "two")()))
		list := &multiclusterv1alpha1.PlacementDecisionList{}
		Expect(hubCP.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{multiclusterv1alpha1.DecisionKeyLabel: "two"})).To(Succeed())
		Expect(list.Items).To(HaveLen(1))
		pd := list.Items[0]
		Expect(pd.Name).To(Equal("two-decision-1"))
		Expect(pd.SchedulerName).To(Equal("flotilla"))
		Expect(pd.Labels).To(HaveKeyWithValue(clusterv1beta1.PlacementLabel, "two"))
		p := getPlacement(ctx, ns, "two")
		Expect(metav1.IsControlledBy(&pd, p)).To(BeTrue(), "owner references %v", pd.OwnerReferences)

		By("each decision naming a ClusterProfile that exists")
		for _, d := range pd.Decisions {
			ref := d.ClusterProfileRef
			Expect(ref.Namespace).To(Equal(ns))
			Eventually(profile(ctx, ref.Namespace, ref.Name)).ShouldNot(BeNil())
		}

		By("following the Placement when it changes")
		updatePlacement(ctx, ns, "two", func(s *clusterv1beta1.PlacementSpec) { s.NumberOfClusters = ptr.To[int32](3) })
		Eventually(neutralChosen(ctx, ns, "two")).Should(ConsistOf(clusters))

		By("gone with the Placement")
		Expect(hubCP.Client.Delete(ctx, p)).To(Succeed())
		Eventually(neutralChosen(ctx, ns, "two")).Should(BeEmpty())
	})

	It("leave OCM's PlacementDecisions readable by Argo CD's clusterDecisionResource generator, as OCM documents its ConfigMap", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "argocd")
		for i := range 2 {
			createMember(ctx, newClusterName(fmt.Sprintf("argo-%d", i)), set, member{})
		}
		createPlacement(ctx, ns, "guestbook", clusterv1beta1.PlacementSpec{})
		Eventually(chosen(ctx, ns, "guestbook")).Should(HaveLen(2))
		dyn := dynamic.NewForConfigOrDie(hubCP.Config)

		By("the ConfigMap of docs/inventory.md, and the generator's labelSelector")
		ocm := map[string]string{"apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "placementdecisions", "statusListKey": "decisions", "matchKey": "clusterName"}
		selector := clusterv1beta1.PlacementLabel + "=guestbook"
		var nonString []string
		Eventually(func() ([]string, error) {
			clusters, other, err := duckTypedClusters(ctx, dyn, ocm, ns, selector)
			nonString = other
			return clusters, err
		}).Should(Equal(chosen(ctx, ns, "guestbook")()))
		By("every field of every decision a string, as every Argo CD release reads them: no score, as OCM's hub writes none")
		Expect(nonString).To(BeEmpty())
		Expect(rawDecisionFields(ctx, dyn, "cluster.open-cluster-management.io", ns, selector)).NotTo(ContainElement("score"))

		By("the neutral kind holding its list outside status, as the SIG's schema has it: not a generator's duck type")
		Eventually(neutralChosen(ctx, ns, "guestbook")).Should(HaveLen(2))
		neutral := map[string]string{"apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "placementdecisions", "statusListKey": "decisions", "matchKey": "clusterName"}
		clusters, _, err := duckTypedClusters(ctx, dyn, neutral, ns, multiclusterv1alpha1.DecisionKeyLabel+"=guestbook")
		Expect(err).NotTo(HaveOccurred())
		Expect(clusters).To(BeEmpty())
		Expect(rawDecisionFields(ctx, dyn, multiclusterv1alpha1.GroupVersion.Group, ns, multiclusterv1alpha1.DecisionKeyLabel+"=guestbook")).NotTo(ContainElement("score"))
	})

	It("carry KEP-5313's placement-key and decision-index labels, so that a consumer finds and orders the slices by them", func(ctx SpecContext) {
		set, ns := newSetWithNamespace(ctx, "neutral-key")
		for i := range 2 {
			createMember(ctx, newClusterName(fmt.Sprintf("key-%d", i)), set, member{})
		}
		createPlacement(ctx, ns, "web", clusterv1beta1.PlacementSpec{})
		createPlacement(ctx, ns, "db", clusterv1beta1.PlacementSpec{NumberOfClusters: ptr.To[int32](1)})
		Eventually(chosen(ctx, ns, "web")).Should(HaveLen(2))

		By("selecting by placement-key alone: the slices of that placement, none of another's")
		byKey := func(key string) func() []multiclusterv1alpha1.PlacementDecision {
			return func() []multiclusterv1alpha1.PlacementDecision {
				list := &multiclusterv1alpha1.PlacementDecisionList{}
				Expect(hubCP.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{multiclusterv1alpha1.PlacementKeyLabel: key})).To(Succeed())
				return list.Items
			}
		}
		Eventually(byKey("web")).Should(ConsistOf(And(
			HaveField("Name", "web-decision-1"),
			HaveField("Decisions", HaveLen(2)),
		)))
		Eventually(byKey("db")).Should(ConsistOf(HaveField("Name", "db-decision-1")))

		By("the first slice at decision-index 0")
		list := &multiclusterv1alpha1.PlacementDecisionList{}
		Expect(hubCP.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{
			multiclusterv1alpha1.PlacementKeyLabel: "web", multiclusterv1alpha1.DecisionIndexLabel: "0",
		})).To(Succeed())
		Expect(list.Items).To(ConsistOf(HaveField("Name", "web-decision-1")))
		Expect(list.Items[0].Labels).To(HaveKeyWithValue(multiclusterv1alpha1.DecisionKeyLabel, "web"))
	})
})

// rawDecisionFields lists, as the API server returns them (unstructured
// JSON, no Go types in between), the field names of every decision of the
// PlacementDecisions of group in namespace ns that selector selects: OCM's
// under status.decisions, the neutral kind's under decisions.
func rawDecisionFields(ctx context.Context, dyn dynamic.Interface, group, ns, selector string) []string {
	GinkgoHelper()
	gvr := clusterv1beta1.GroupVersion.WithResource("placementdecisions")
	path := []string{"status", "decisions"}
	if group == multiclusterv1alpha1.GroupVersion.Group {
		gvr, path = multiclusterv1alpha1.GroupVersion.WithResource("placementdecisions"), []string{"decisions"}
	}
	list, err := dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	Expect(err).NotTo(HaveOccurred())
	Expect(list.Items).NotTo(BeEmpty())
	var fields []string
	for _, item := range list.Items {
		decisions, _, err := unstructured.NestedSlice(item.Object, path...)
		Expect(err).NotTo(HaveOccurred())
		Expect(decisions).NotTo(BeEmpty(), "%s %s has no decisions", gvr.Resource, item.GetName())
		for _, d := range decisions {
			for k := range d.(map[string]any) {
				if !slices.Contains(fields, k) {
					fields = append(fields, k)
				}
			}
		}
	}
	return fields
}
