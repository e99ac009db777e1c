package integration

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/api/multicluster/v1alpha1"
)

// profile returns, for Eventually, ClusterProfile ns/name, nil while it
// does not exist.
func profile(ctx context.Context, ns, name string) func() *multiclusterv1alpha1.ClusterProfile {
	return func() *multiclusterv1alpha1.ClusterProfile {
		p := &multiclusterv1alpha1.ClusterProfile{}
		if err := hubCP.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
			Expect(client.IgnoreNotFound(err)).To(Succeed())
			return nil
		}
		return p
	}
}

// profileNames returns, for Eventually, the names of the ClusterProfiles in ns.
func profileNames(ctx context.Context, ns string) func() []string {
	return func() []string {
		list := &multiclusterv1alpha1.ClusterProfileList{}
		Expect(hubCP.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		out := []string{}
		for _, p := range list.Items {
			out = append(out, p.Name)
		}
		return out
	}
}

// haveProperty matches a ClusterProfile with property name whose value
// equals value, or matches it when value is a matcher.
func haveProperty(name string, value any) OmegaMatcher {
	return HaveField("Status.Properties", ContainElement(And(HaveField("Name", name), HaveField("Value", value))))
}

// haveProfileCondition matches a ClusterProfile with condition t in status s.
func haveProfileCondition(t string, s metav1.ConditionStatus) OmegaMatcher {
	return HaveField("Status.Conditions", ContainElement(And(HaveField("Type", t), HaveField("Status", s))))
}

// reportClusterStatus changes a cluster's status as its agent would.
func reportClusterStatus(ctx context.Context, name string, change func(*clusterv1.ManagedCluster)) {
	GinkgoHelper()
	Eventually(func() error {
		mc := getCluster(ctx, name)
		change(mc)
		return hubCP.Client.Status().Update(ctx, mc)
	}).Should(Succeed())
}
