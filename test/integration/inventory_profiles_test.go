package integration

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/api/multicluster/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/tunnel"
)

var _ = Describe("ClusterProfile inventory", func() {
	It("publishes each cluster of a bound set in every namespace it is bound to, keeps the status current, and removes the profile with the cluster or the binding", func(ctx SpecContext) {
		set, ns1 := newSetWithNamespace(ctx, "inv")
		ns2 := newNamespace(ctx, "inv")
		bindSet(ctx, ns2, set)
		c1, c2 := newClusterName("inv-a"), newClusterName("inv-b")
		createMember(ctx, c1, set, member{claims: map[string]string{"region": "eu"}})

		By("a profile of the cluster in both namespaces, owned by flotilla, with its access provider")
		for _, ns := range []string{ns1, ns2} {
			Eventually(profile(ctx, ns, c1)).Should(And(
				Not(BeNil()),
				HaveField("Labels", HaveKeyWithValue(multiclusterv1alpha1.ClusterManagerLabel, "flotilla")),
				HaveField("Spec.ClusterManager.Name", "flotilla"),
				haveProfileCondition(multiclusterv1alpha1.ConditionControlPlaneHealthy, metav1.ConditionTrue),
				haveProfileCondition(multiclusterv1alpha1.ConditionJoined, metav1.ConditionUnknown),
				haveProperty("region", "eu"),
			))
		}
		p := profile(ctx, ns1, c1)()
		Expect(p.Status.AccessProviders).To(HaveLen(1))
		Expect(p.Status.AccessProviders[0].Name).To(Equal("flotilla"))
		Expect(p.Status.AccessProviders[0].Cluster.Server).To(Equal(hubCP.URL + tunnel.ProxyPath(c1)))
		Expect(p.Status.AccessProviders[0].Cluster.CertificateAuthorityData).To(Equal(hubCP.CAData))
		Expect(p.Status.AccessProviders[0].Cluster.Extensions).To(ConsistOf(HaveField("Name", multiclusterv1alpha1.ExecExtensionName)))

		By("the profile following the cluster's conditions, version and claims")
		reportClusterStatus(ctx, c1, func(mc *clusterv1.ManagedCluster) {
			meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{Type: clusterv1.ManagedClusterConditionJoined, Status: metav1.ConditionTrue, Reason: clusterv1.ReasonManagedClusterJoined, Message: "joined"})
			meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionFalse, Reason: "KubeAPIServerUnavailable", Message: "down"})
			mc.Status.Version.Kubernetes = "v1.36.3"
			mc.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{{Name: "region", Value: "us"}}
		})
		Eventually(profile(ctx, ns1, c1)).Should(And(
			haveProfileCondition(multiclusterv1alpha1.ConditionJoined, metav1.ConditionTrue),
			haveProfileCondition(multiclusterv1alpha1.ConditionControlPlaneHealthy, metav1.ConditionFalse),
			HaveField("Status.Version.Kubernetes", "v1.36.3"),
			haveProperty("region", "us"),
		))

		By("no profile of a cluster outside the bound sets, until it joins one")
		createCluster(ctx, c2)
		reportClusterStatus(ctx, c1, func(mc *clusterv1.ManagedCluster) { mc.Status.Version.Kubernetes = "v1.36.4" })
		// The inventory of a namespace is written in one pass: once it
		// shows c1's new version, it has considered c2 as well.
		Eventually(profile(ctx, ns1, c1)).Should(HaveField("Status.Version.Kubernetes", "v1.36.4"))
		Expect(profileNames(ctx, ns1)()).To(ConsistOf(c1))
		Eventually(func() error {
			mc := getCluster(ctx, c2)
			mc.Labels = map[string]string{clusterv1beta2.ClusterSetLabel: set}
			return hubCP.Client.Update(ctx, mc)
		}).Should(Succeed())
		Eventually(profileNames(ctx, ns1)).Should(ConsistOf(c1, c2))

		By("a profile deleted by someone coming back")
		Expect(hubCP.Client.Delete(ctx, profile(ctx, ns1, c2)())).To(Succeed())
		Eventually(profile(ctx, ns1, c2)).Should(And(Not(BeNil()), HaveField("Spec.ClusterManager.Name", "flotilla")))

		By("the binding's removal emptying its namespace, and only that one")
		Expect(hubCP.Client.Delete(ctx, &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns2, Name: set}})).To(Succeed())
		Eventually(profileNames(ctx, ns2)).Should(BeEmpty())
		Expect(profileNames(ctx, ns1)()).To(ConsistOf(c1, c2))

		By("the cluster's deletion removing its profile")
		Expect(hubCP.Client.Delete(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: c1}})).To(Succeed())
		Eventually(profileNames(ctx, ns1)).Should(ConsistOf(c2))

		By("leaving another manager's profile of the same name alone")
		other := &multiclusterv1alpha1.ClusterProfile{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns2, Name: c2, Labels: map[string]string{multiclusterv1alpha1.ClusterManagerLabel: "other"}},
			Spec:       multiclusterv1alpha1.ClusterProfileSpec{ClusterManager: multiclusterv1alpha1.ClusterManager{Name: "other"}},
		}
		Expect(hubCP.Client.Create(ctx, other)).To(Succeed())
		bindSet(ctx, ns2, set)
		// ns2's inventory, written in one pass, holds a new member once
		// that pass has run with c2 in the set as well.
		c3 := newClusterName("inv-c")
		createMember(ctx, c3, set, member{})
		Eventually(profileNames(ctx, ns2)).Should(ContainElement(c3))
		Expect(hubCP.Client.Get(ctx, client.ObjectKeyFromObject(other), other)).To(Succeed())
		Expect(other.Spec.ClusterManager.Name).To(Equal("other"))
		Expect(other.Labels).To(HaveKeyWithValue(multiclusterv1alpha1.ClusterManagerLabel, "other"))
		Expect(other.Status.AccessProviders).To(BeEmpty())
	})
})
