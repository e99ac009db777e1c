package integration

import (
	"context"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
)

// Builders for the placement specs. Every spec makes its own namespace,
// sets and clusters (with generated names), as the hub is shared; clusters
// are created directly by the admin, with the status an agent would report.

// newNamespace creates a namespace for one spec and deletes it at the end.
func newNamespace(ctx SpecContext, prefix string) string {
	GinkgoHelper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	Expect(hubCP.Client.Create(ctx, ns)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(hubCP.Client.Delete(ctx, ns))).To(Succeed()) })
	return ns.Name
}

// createSet creates a ManagedClusterSet (ExclusiveClusterSetLabel unless a
// selector is given) and deletes it at the end.
func createSet(ctx SpecContext, name string, selector *metav1.LabelSelector) {
	GinkgoHelper()
	set := &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if selector != nil {
		set.Spec.ClusterSelector = clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.LabelSelector, LabelSelector: selector}
	}
	Expect(hubCP.Client.Create(ctx, set)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(hubCP.Client.Delete(ctx, set))).To(Succeed()) })
}

// bindSet binds set to namespace ns.
func bindSet(ctx SpecContext, ns, set string) {
	GinkgoHelper()
	b := &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: set},
		Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: set}}
	Expect(hubCP.Client.Create(ctx, b)).To(Succeed())
}

// member describes a cluster to create.
type member struct {
	labels      map[string]string
	claims      map[string]string
	taints      []clusterv1.Taint
	cpu, memory string
}

// createMember creates a cluster in set with what m says, reported as an
// available agent would report it, and deletes it at the end.
func createMember(ctx SpecContext, name, set string, m member) {
	GinkgoHelper()
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{clusterv1beta2.ClusterSetLabel: set}}}
	for k, v := range m.labels {
		mc.Labels[k] = v
	}
	mc.Spec.Taints = m.taints
	Expect(hubCP.Client.Create(ctx, mc)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) {
		Expect(client.IgnoreNotFound(hubCP.Client.Delete(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}))).To(Succeed())
	})
	Eventually(func() error {
		got := getCluster(ctx, name)
		meta.SetStatusCondition(&got.Status.Conditions, metav1.Condition{Type: clusterv1.ManagedClusterConditionAvailable,
			Status: metav1.ConditionTrue, Reason: clusterv1.ReasonManagedClusterAvailable, Message: "reported by the test"})
		got.Status.Allocatable = clusterv1.ResourceList{}
		if m.cpu != "" {
			got.Status.Allocatable[clusterv1.ResourceCPU] = resource.MustParse(m.cpu)
		}
		if m.memory != "" {
			got.Status.Allocatable[clusterv1.ResourceMemory] = resource.MustParse(m.memory)
		}
		got.Status.ClusterClaims = nil
		for k, v := range m.claims {
			got.Status.ClusterClaims = append(got.Status.ClusterClaims, clusterv1.ManagedClusterClaim{Name: k, Value: v})
		}
		return hubCP.Client.Status().Update(ctx, got)
	}).Should(Succeed())
	// The hub taints a cluster until it is reported available: wait until
	// it no longer does, so that the cluster qualifies from now on.
	Eventually(func() []clusterv1.Taint { return getCluster(ctx, name).Spec.Taints }).ShouldNot(ContainElement(
		HaveField("Key", BeElementOf(clusterv1.ManagedClusterTaintUnreachable, clusterv1.ManagedClusterTaintUnavailable))))
}

// createPlacement creates a Placement in ns.
func createPlacement(ctx SpecContext, ns, name string, spec clusterv1beta1.PlacementSpec) {
	GinkgoHelper()
	Expect(hubCP.Client.Create(ctx, &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: spec})).To(Succeed())
}

// updatePlacement changes the spec of a Placement.
func updatePlacement(ctx SpecContext, ns, name string, change func(*clusterv1beta1.PlacementSpec)) {
	GinkgoHelper()
	Eventually(func() error {
		p := &clusterv1beta1.Placement{}
		if err := hubCP.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
			return err
		}
		change(&p.Spec)
		return hubCP.Client.Update(ctx, p)
	}).Should(Succeed())
}

func getPlacement(ctx context.Context, ns, name string) *clusterv1beta1.Placement {
	GinkgoHelper()
	p := &clusterv1beta1.Placement{}
	Expect(hubCP.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p)).To(Succeed())
	return p
}

// placementDecisions lists the PlacementDecisions of a placement.
func placementDecisions(ctx context.Context, ns, name string) []clusterv1beta1.PlacementDecision {
	GinkgoHelper()
	list := &clusterv1beta1.PlacementDecisionList{}
	Expect(hubCP.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{clusterv1beta1.PlacementLabel: name})).To(Succeed())
	return list.Items
}

// chosen returns, for Eventually, the sorted clusters that a placement's
// PlacementDecisions hold.
func chosen(ctx context.Context, ns, name string) func() []string {
	return func() []string {
		out := []string{}
		for _, pd := range placementDecisions(ctx, ns, name) {
			for _, d := range pd.Status.Decisions {
				out = append(out, d.ClusterName)
			}
		}
		slices.Sort(out)
		return out
	}
}

// placementCondition returns, for Eventually, a condition of a placement.
func placementCondition(ctx context.Context, ns, name, conditionType string) func() *metav1.Condition {
	return func() *metav1.Condition {
		return meta.FindStatusCondition(getPlacement(ctx, ns, name).Status.Conditions, conditionType)
	}
}

// haveCondition matches a condition with the given status and reason.
func haveCondition(status metav1.ConditionStatus, reason string) OmegaMatcher {
	return And(Not(BeNil()), HaveField("Status", status), HaveField("Reason", reason))
}

// newSetWithNamespace makes a set, a namespace it is bound to, and returns both names.
func newSetWithNamespace(ctx SpecContext, prefix string) (set, ns string) {
	GinkgoHelper()
	set = newClusterName(prefix)
	createSet(ctx, set, nil)
	ns = newNamespace(ctx, prefix)
	bindSet(ctx, ns, set)
	return set, ns
}

// ensureNamespace creates namespace name unless it exists, and deletes it
// at the end if it created it.
func ensureNamespace(ctx SpecContext, name string) {
	GinkgoHelper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	err := hubCP.Client.Create(ctx, ns)
	if apierrors.IsAlreadyExists(err) {
		return
	}
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(hubCP.Client.Delete(ctx, ns))).To(Succeed()) })
}

// deleteNamespace deletes namespace name if it exists.
func deleteNamespace(ctx context.Context, name string) error {
	return client.IgnoreNotFound(hubCP.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}))
}
