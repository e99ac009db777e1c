package registration

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

func node(providerID string, capacity, allocatable corev1.ResourceList) corev1.Node {
	return corev1.Node{Spec: corev1.NodeSpec{ProviderID: providerID}, Status: corev1.NodeStatus{Capacity: capacity, Allocatable: allocatable}}
}

func resources(cpu, memory, pods string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for name, v := range map[corev1.ResourceName]string{corev1.ResourceCPU: cpu, corev1.ResourceMemory: memory, corev1.ResourcePods: pods} {
		if v != "" {
			l[name] = resource.MustParse(v)
		}
	}
	return l
}

func TestResourceTotalsSumsCPUMemoryAndPods(t *testing.T) {
	g := NewWithT(t)
	nodes := []corev1.Node{
		node("", resources("4", "16Gi", "110"), resources("3500m", "15Gi", "110")),
		node("", resources("2", "8Gi", "110"), resources("1500m", "7Gi", "100")),
		node("", resources("", "", ""), resources("", "", "")), // a node that reports nothing yet
	}
	nodes[0].Status.Capacity["nvidia.com/gpu"] = resource.MustParse("1")

	capacity, allocatable := resourceTotals(nodes)
	g.Expect(capacity).To(HaveLen(3), "only cpu, memory and pods are reported")
	g.Expect(quantities(capacity)).To(Equal(map[clusterv1.ResourceName]string{"cpu": "6", "memory": "24Gi", "pods": "220"}))
	g.Expect(quantities(allocatable)).To(Equal(map[clusterv1.ResourceName]string{"cpu": "5", "memory": "22Gi", "pods": "210"}))
}

// quantities says each quantity in its canonical form.
func quantities(l clusterv1.ResourceList) map[clusterv1.ResourceName]string {
	out := map[clusterv1.ResourceName]string{}
	for name, q := range l {
		out[name] = q.String()
	}
	return out
}

func TestResourceTotalsWithoutNodesReportsNothing(t *testing.T) {
	g := NewWithT(t)
	capacity, allocatable := resourceTotals(nil)
	g.Expect(capacity).To(BeNil())
	g.Expect(allocatable).To(BeNil())
}

func TestStripNodeKeepsOnlyWhatTheInventoryReads(t *testing.T) {
	g := NewWithT(t)
	full := node("aws:///eu-west-1a/i-1", resources("4", "16Gi", "110"), resources("4", "15Gi", "110"))
	full.Name, full.ResourceVersion = "n1", "42"
	full.Labels = map[string]string{"a": "b"}
	full.Status.Images = []corev1.ContainerImage{{Names: []string{"big"}}}
	stripped, err := stripNode(&full)
	g.Expect(err).NotTo(HaveOccurred())
	want := node("aws:///eu-west-1a/i-1", full.Status.Capacity, full.Status.Allocatable)
	want.Name, want.ResourceVersion = "n1", "42"
	g.Expect(stripped).To(Equal(&want))
}

func claimObject(name, value string) clusterv1alpha1.ClusterClaim {
	return clusterv1alpha1.ClusterClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1alpha1.ClusterClaimSpec{Value: value}}
}

func TestClusterClaims(t *testing.T) {
	reserved := reservedClaims("uid-1", "v1.36.3", nil)
	for _, tc := range []struct {
		name       string
		objects    []clusterv1alpha1.ClusterClaim
		properties map[string]string
		max        int
		want       []clusterv1.ManagedClusterClaim
	}{
		{
			name: "reserved claims the agent finds out itself",
			max:  20,
			want: []clusterv1.ManagedClusterClaim{{Name: "id.k8s.io", Value: "uid-1"}, {Name: "kubeversion.open-cluster-management.io", Value: "v1.36.3"}},
		},
		{
			name:    "ClusterClaims after the reserved ones, by name",
			objects: []clusterv1alpha1.ClusterClaim{claimObject("region", "eu"), claimObject("env", "prod")},
			max:     20,
			want: []clusterv1.ManagedClusterClaim{
				{Name: "id.k8s.io", Value: "uid-1"}, {Name: "kubeversion.open-cluster-management.io", Value: "v1.36.3"},
				{Name: "env", Value: "prod"}, {Name: "region", Value: "eu"},
			},
		},
		{
			name:    "a ClusterClaim of a reserved name overrides the agent, in the reserved order",
			objects: []clusterv1alpha1.ClusterClaim{claimObject("product.open-cluster-management.io", "Mine"), claimObject("id.k8s.io", "chosen")},
			max:     20,
			want: []clusterv1.ManagedClusterClaim{
				{Name: "id.k8s.io", Value: "chosen"}, {Name: "kubeversion.open-cluster-management.io", Value: "v1.36.3"},
				{Name: "product.open-cluster-management.io", Value: "Mine"},
			},
		},
		{
			name:    "at most max custom claims, and none without a value",
			objects: []clusterv1alpha1.ClusterClaim{claimObject("c", "3"), claimObject("a", "1"), claimObject("b", "2"), claimObject("empty", "")},
			max:     2,
			want: []clusterv1.ManagedClusterClaim{
				{Name: "id.k8s.io", Value: "uid-1"}, {Name: "kubeversion.open-cluster-management.io", Value: "v1.36.3"},
				{Name: "a", Value: "1"}, {Name: "b", Value: "2"},
			},
		},
		{
			name:       "ClusterProperties: the well-known ones after the reserved claims, whatever the cap; the others as custom claims, overriding a ClusterClaim",
			objects:    []clusterv1alpha1.ClusterClaim{claimObject("region", "eu"), claimObject("clusterset.k8s.io", "from-claim"), claimObject("zone", "z1")},
			properties: map[string]string{"cluster.clusterset.k8s.io": "c-7", "clusterset.k8s.io": "east", "region": "us", "empty": ""},
			max:        1,
			want: []clusterv1.ManagedClusterClaim{
				{Name: "id.k8s.io", Value: "uid-1"}, {Name: "kubeversion.open-cluster-management.io", Value: "v1.36.3"},
				{Name: "cluster.clusterset.k8s.io", Value: "c-7"}, {Name: "clusterset.k8s.io", Value: "east"},
				{Name: "region", Value: "us"},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(clusterClaims(reserved, tc.objects, tc.properties, tc.max)).To(Equal(tc.want))
		})
	}
}

func TestReservedClaimsPlatformAndProductWhenKnown(t *testing.T) {
	for _, tc := range []struct {
		name, version, providerID string
		platform, product         string
	}{
		{name: "plain", version: "v1.36.3"},
		{name: "EKS", version: "v1.30.2-eks-1552ad0", providerID: "aws:///us-east-1a/i-0abc", platform: "AWS", product: "EKS"},
		{name: "GKE", version: "v1.30.5-gke.1014001", providerID: "gce://proj/europe-west1-b/n1", platform: "GCP", product: "GKE"},
		{name: "k3s", version: "v1.31.1+k3s1", product: "K3s"},
		{name: "Azure, product unknown", version: "v1.30.0", providerID: "azure:///subscriptions/x", platform: "Azure"},
		{name: "unknown provider", version: "v1.30.0", providerID: "kind://docker/kind/kind-control-plane"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			nodes := []corev1.Node{node("", nil, nil), node(tc.providerID, nil, nil)}
			claims := reservedClaims("uid", tc.version, nodes)
			check := func(name, want string) {
				if want == "" {
					g.Expect(claims).NotTo(HaveKey(name))
				} else {
					g.Expect(claims).To(HaveKeyWithValue(name, want))
				}
			}
			check(clusterv1.ClusterClaimPlatform, tc.platform)
			check(clusterv1.ClusterClaimProduct, tc.product)
		})
	}
}
