package integration

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
)

func getSet(ctx SpecContext, name string) func() (*clusterv1beta2.ManagedClusterSet, error) {
	return func() (*clusterv1beta2.ManagedClusterSet, error) {
		set := &clusterv1beta2.ManagedClusterSet{}
		return set, hubCP.Client.Get(ctx, client.ObjectKey{Name: name}, set)
	}
}

func setCondition(ctx SpecContext, name string) func() *metav1.Condition {
	return func() *metav1.Condition {
		set, err := getSet(ctx, name)()
		if err != nil {
			return nil
		}
		return meta.FindStatusCondition(set.Status.Conditions, clusterv1beta2.ManagedClusterSetConditionEmpty)
	}
}

func bindingCondition(ctx SpecContext, ns, name string) func() *metav1.Condition {
	return func() *metav1.Condition {
		b := &clusterv1beta2.ManagedClusterSetBinding{}
		if err := hubCP.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, b); err != nil {
			return nil
		}
		return meta.FindStatusCondition(b.Status.Conditions, clusterv1beta2.ClusterSetBindingBoundType)
	}
}

var _ = Describe("Cluster set: the sets the hub keeps", func() {
	It("keeps default and global, creating them again when deleted and putting their spec back", func(ctx SpecContext) {
		Eventually(getSet(ctx, "global")).Should(HaveField("Spec.ClusterSelector", clusterv1beta2.ManagedClusterSelector{
			SelectorType: clusterv1beta2.LabelSelector, LabelSelector: &metav1.LabelSelector{}}))
		Eventually(getSet(ctx, "default")).Should(HaveField("Spec.ClusterSelector.SelectorType", clusterv1beta2.ExclusiveClusterSetLabel))

		By("creating global again when it is deleted")
		old, err := getSet(ctx, "global")()
		Expect(err).NotTo(HaveOccurred())
		Expect(hubCP.Client.Delete(ctx, old)).To(Succeed())
		Eventually(func() (types.UID, error) {
			set, err := getSet(ctx, "global")()
			if err != nil {
				return "", err
			}
			return set.UID, nil
		}).ShouldNot(Or(BeEmpty(), Equal(old.UID)))

		By("putting the spec of default back")
		Eventually(func() error {
			set, err := getSet(ctx, "default")()
			if err != nil {
				return err
			}
			set.Spec.ClusterSelector = clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.LabelSelector,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"mine": "now"}}}
			return hubCP.Client.Update(ctx, set)
		}).Should(Succeed())
		Eventually(getSet(ctx, "default")).Should(HaveField("Spec.ClusterSelector", clusterv1beta2.ManagedClusterSelector{
			SelectorType: clusterv1beta2.ExclusiveClusterSetLabel}))
	})
})

var _ = Describe("Cluster set: membership and bindings", func() {
	It("labels clusters without a set into default and reports whether each set is empty", func(ctx SpecContext) {
		c := newClusterName("cs-plain")
		createCluster(ctx, c)
		Eventually(func() map[string]string { return getCluster(ctx, c).Labels }).
			Should(HaveKeyWithValue(clusterv1beta2.ClusterSetLabel, clusterv1beta2.DefaultManagedClusterSetName))
		Eventually(setCondition(ctx, "global")).Should(haveCondition(metav1.ConditionFalse, clusterv1beta2.ReasonClustersSelected))

		By("reporting a new set empty, then not, when a cluster is labelled into it")
		set := newClusterName("cs-set")
		createSet(ctx, set, nil)
		Eventually(setCondition(ctx, set)).Should(haveCondition(metav1.ConditionTrue, clusterv1beta2.ReasonNoClusterMatched))
		Expect(updateCluster(ctx, hubCP.Client, c, func(mc *clusterv1.ManagedCluster) { mc.Labels[clusterv1beta2.ClusterSetLabel] = set })).To(Succeed())
		Eventually(setCondition(ctx, set)).Should(And(haveCondition(metav1.ConditionFalse, clusterv1beta2.ReasonClustersSelected),
			HaveField("Message", "1 ManagedClusters selected")))

		By("counting the members of a LabelSelector set")
		selected := newClusterName("cs-sel")
		createSet(ctx, selected, &metav1.LabelSelector{MatchLabels: map[string]string{"cs-test": c}})
		Eventually(setCondition(ctx, selected)).Should(haveCondition(metav1.ConditionTrue, clusterv1beta2.ReasonNoClusterMatched))
		Expect(updateCluster(ctx, hubCP.Client, c, func(mc *clusterv1.ManagedCluster) { mc.Labels["cs-test"] = c })).To(Succeed())
		Eventually(setCondition(ctx, selected)).Should(haveCondition(metav1.ConditionFalse, clusterv1beta2.ReasonClustersSelected))

		By("putting a cluster whose set label is removed back into default")
		Expect(updateCluster(ctx, hubCP.Client, c, func(mc *clusterv1.ManagedCluster) { delete(mc.Labels, clusterv1beta2.ClusterSetLabel) })).To(Succeed())
		Eventually(func() map[string]string { return getCluster(ctx, c).Labels }).
			Should(HaveKeyWithValue(clusterv1beta2.ClusterSetLabel, clusterv1beta2.DefaultManagedClusterSetName))
		Eventually(setCondition(ctx, set)).Should(haveCondition(metav1.ConditionTrue, clusterv1beta2.ReasonNoClusterMatched))
	})

	It("reports a binding Bound while its set exists, and refuses one not named after its set", func(ctx SpecContext) {
		ns := newNamespace(ctx, "cs-bind")
		set := newClusterName("cs-later")
		bindSet(ctx, ns, set)
		Eventually(bindingCondition(ctx, ns, set)).Should(haveCondition(metav1.ConditionFalse, clusterv1beta2.ReasonClusterSetNotFound))
		createSet(ctx, set, nil)
		Eventually(bindingCondition(ctx, ns, set)).Should(haveCondition(metav1.ConditionTrue, clusterv1beta2.ReasonClusterSetBound))
		Expect(hubCP.Client.Delete(ctx, &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: set}})).To(Succeed())
		Eventually(bindingCondition(ctx, ns, set)).Should(haveCondition(metav1.ConditionFalse, clusterv1beta2.ReasonClusterSetNotFound))

		err := hubCP.Client.Create(ctx, &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "alias"},
			Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "default"}})
		Expect(err).To(MatchError(ContainSubstring("ManagedClusterSetBinding alias must be named after the set it binds: set spec.clusterSet to alias")))
	})
})

var _ = Describe("Cluster set: admission of joins and binds", func() {
	joinRule := func(sets ...string) rbacv1.PolicyRule {
		return rbacv1.PolicyRule{APIGroups: []string{clusterv1.GroupVersion.Group}, Resources: []string{"managedclustersets/join"}, ResourceNames: sets, Verbs: []string{"create"}}
	}

	It("lets only users allowed managedclustersets/join put a cluster into a set or take it out", func(ctx SpecContext) {
		prod, staging := newClusterName("cs-prod"), newClusterName("cs-staging")
		editor, joiner := newClusterName("editor"), newClusterName("joiner")
		grant(ctx, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: editor}, editClusters)
		grant(ctx, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: joiner}, editClusters, joinRule(prod, "default"))
		asEditor, asJoiner := impersonating(editor), impersonating(joiner)
		c := newClusterName("cs-adm")
		intoSet := func(set string) func(*clusterv1.ManagedCluster) {
			return func(mc *clusterv1.ManagedCluster) {
				if mc.Labels == nil {
					mc.Labels = map[string]string{}
				}
				mc.Labels[clusterv1beta2.ClusterSetLabel] = set
			}
		}

		By("refusing an editor to create a cluster in a set, saying which permission is missing")
		mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: c, Labels: map[string]string{clusterv1beta2.ClusterSetLabel: prod}}}
		Eventually(func() error { return asEditor.Create(ctx, mc.DeepCopy(), client.DryRunAll) }).Should(And(beForbidden(),
			MatchError(ContainSubstring("may not add ManagedCluster "+c+" to ManagedClusterSet "+prod+": it needs permission to create managedclustersets/join (resource name "+prod+")"))))

		By("letting the editor create it without a set (it joins default) and change other labels")
		Expect(asEditor.Create(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: c}})).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			Expect(client.IgnoreNotFound(hubCP.Client.Delete(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: c}}))).To(Succeed())
		})
		Eventually(func() map[string]string { return getCluster(ctx, c).Labels }).Should(HaveKeyWithValue(clusterv1beta2.ClusterSetLabel, "default"))
		Expect(updateCluster(ctx, asEditor, c, func(mc *clusterv1.ManagedCluster) { mc.Labels["edited"] = "yes" })).To(Succeed())
		Expect(updateCluster(ctx, asEditor, c, func(mc *clusterv1.ManagedCluster) { mc.Labels = map[string]string{"replaced": "all"} })).To(Succeed())

		By("refusing the editor to move it into a set")
		Expect(updateCluster(ctx, asEditor, c, intoSet(prod))).To(And(beForbidden(), MatchError(ContainSubstring("managedclustersets/join"))))

		By("letting a user with join on the old and the new set move it")
		Expect(updateCluster(ctx, asJoiner, c, intoSet(prod))).To(Succeed())

		By("refusing to move it on without join on the next set, and refusing the editor to take it out")
		Expect(updateCluster(ctx, asJoiner, c, intoSet(staging))).To(And(beForbidden(), MatchError(ContainSubstring("to ManagedClusterSet "+staging))))
		Expect(updateCluster(ctx, asEditor, c, func(mc *clusterv1.ManagedCluster) { delete(mc.Labels, clusterv1beta2.ClusterSetLabel) })).
			To(And(beForbidden(), MatchError(ContainSubstring("managedclustersets/join"))))
		defaultOnly := newClusterName("leaver")
		grant(ctx, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: defaultOnly}, editClusters, joinRule("default"))
		Expect(updateCluster(ctx, impersonating(defaultOnly), c, func(mc *clusterv1.ManagedCluster) { delete(mc.Labels, clusterv1beta2.ClusterSetLabel) })).
			To(And(beForbidden(), MatchError(ContainSubstring("may not take ManagedCluster "+c+" out of ManagedClusterSet "+prod))))

		By("letting the hub admin (system:masters) do anything")
		Expect(updateCluster(ctx, hubCP.Client, c, intoSet(staging))).To(Succeed())
	})

	It("lets only users allowed managedclustersets/bind bind a set", func(ctx SpecContext) {
		ns := newNamespace(ctx, "cs-bindadm")
		set := newClusterName("cs-bindable")
		binder, other := newClusterName("binder"), newClusterName("other")
		bindings := rbacv1.PolicyRule{APIGroups: []string{clusterv1beta2.GroupVersion.Group}, Resources: []string{"managedclustersetbindings"}, Verbs: []string{"create", "get", "update"}}
		grant(ctx, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: binder}, bindings,
			rbacv1.PolicyRule{APIGroups: []string{clusterv1beta2.GroupVersion.Group}, Resources: []string{"managedclustersets/bind"}, ResourceNames: []string{set}, Verbs: []string{"create"}})
		grant(ctx, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: other}, bindings)
		binding := &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: set}, Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: set}}
		Eventually(func() error { return impersonating(other).Create(ctx, binding.DeepCopy(), client.DryRunAll) }).Should(And(beForbidden(),
			MatchError(ContainSubstring("may not bind ManagedClusterSet "+set+" to namespace "+ns+": it needs permission to create managedclustersets/bind"))))
		Eventually(func() error { return impersonating(binder).Create(ctx, binding.DeepCopy()) }).Should(Succeed())
	})
})
