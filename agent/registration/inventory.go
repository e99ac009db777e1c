package registration

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	aboutv1beta1 "github.com/flotilla-io/flotilla/api/about/v1beta1"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

// MaxCustomClusterClaims caps the ClusterClaims, other than the reserved
// ones, that the agent reports, as OCM's agent does by default.
const MaxCustomClusterClaims = 20

// reportedResources are the resources summed into capacity and allocatable.
var reportedResources = []clusterv1.ResourceName{clusterv1.ResourceCPU, clusterv1.ResourceMemory, clusterv1.ResourcePods}

// resourceTotals sums the reported resources over nodes; nil when there
// are no nodes.
func resourceTotals(nodes []corev1.Node) (capacity, allocatable clusterv1.ResourceList) {
	if len(nodes) == 0 {
		return nil, nil
	}
	capacity, allocatable = clusterv1.ResourceList{}, clusterv1.ResourceList{}
	for _, name := range reportedResources {
		var c, a resource.Quantity
		for i := range nodes {
			if q, ok := nodes[i].Status.Capacity[corev1.ResourceName(name)]; ok {
				c.Add(q)
			}
			if q, ok := nodes[i].Status.Allocatable[corev1.ResourceName(name)]; ok {
				a.Add(q)
			}
		}
		capacity[name], allocatable[name] = c, a
	}
	return capacity, allocatable
}

// stripNode keeps of a Node only what the inventory reads, so that the
// agent's node cache stays small on large clusters.
func stripNode(obj any) (any, error) {
	node, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: node.Name, UID: node.UID, ResourceVersion: node.ResourceVersion},
		Spec:       corev1.NodeSpec{ProviderID: node.Spec.ProviderID},
		Status:     corev1.NodeStatus{Capacity: node.Status.Capacity, Allocatable: node.Status.Allocatable},
	}, nil
}

// reservedClaims are the reserved claims the agent can tell itself; names
// whose value is unknown are left out.
func reservedClaims(clusterID, gitVersion string, nodes []corev1.Node) map[string]string {
	claims := map[string]string{
		clusterv1.ClusterClaimID:          clusterID,
		clusterv1.ClusterClaimKubeVersion: gitVersion,
		clusterv1.ClusterClaimPlatform:    platform(nodes),
		clusterv1.ClusterClaimProduct:     product(gitVersion),
	}
	for name, value := range claims {
		if value == "" {
			delete(claims, name)
		}
	}
	return claims
}

// clusterClaims returns what status.clusterClaims reports: the reserved
// claims in their fixed order, where a ClusterClaim of the same name
// overrides what the agent found out itself, then the other ClusterClaims
// by name, at most maxCustom of them. properties are the About API's
// ClusterProperties by name: a property overrides a ClusterClaim of the
// same name (as in OCM), and counts as a custom claim, except for the
// well-known About names (cluster.clusterset.k8s.io, clusterset.k8s.io),
// which are always reported, after the reserved claims.
func clusterClaims(reserved map[string]string, objects []clusterv1alpha1.ClusterClaim, properties map[string]string, maxCustom int) []clusterv1.ManagedClusterClaim {
	values := map[string]string{}
	for name, value := range reserved {
		values[name] = value
	}
	customValues := map[string]string{}
	for _, o := range objects {
		if o.Spec.Value == "" || !o.DeletionTimestamp.IsZero() {
			continue
		}
		if isReserved(o.Name) {
			values[o.Name] = o.Spec.Value
			continue
		}
		customValues[o.Name] = o.Spec.Value
	}
	wellKnown := map[string]string{}
	for name, value := range properties {
		switch {
		case value == "":
		case isReserved(name):
			values[name] = value
		case name == aboutv1beta1.ClusterIDProperty || name == aboutv1beta1.ClusterSetProperty:
			wellKnown[name] = value
			delete(customValues, name)
		default:
			customValues[name] = value
		}
	}
	var claims []clusterv1.ManagedClusterClaim
	for _, name := range clusterv1.ReservedClusterClaimNames {
		if v, ok := values[name]; ok {
			claims = append(claims, clusterv1.ManagedClusterClaim{Name: name, Value: v})
		}
	}
	for _, name := range []string{aboutv1beta1.ClusterIDProperty, aboutv1beta1.ClusterSetProperty} {
		if v, ok := wellKnown[name]; ok {
			claims = append(claims, clusterv1.ManagedClusterClaim{Name: name, Value: v})
		}
	}
	custom := make([]clusterv1.ManagedClusterClaim, 0, len(customValues))
	for name, value := range customValues {
		custom = append(custom, clusterv1.ManagedClusterClaim{Name: name, Value: value})
	}
	sort.Slice(custom, func(i, j int) bool { return custom[i].Name < custom[j].Name })
	if len(custom) > maxCustom {
		custom = custom[:maxCustom]
	}
	return append(claims, custom...)
}

func isReserved(name string) bool {
	for _, r := range clusterv1.ReservedClusterClaimNames {
		if name == r {
			return true
		}
	}
	return false
}

// providerPlatforms maps a node's providerID scheme to the platform claim.
var providerPlatforms = map[string]string{
	"aws":       "AWS",
	"gce":       "GCP",
	"azure":     "Azure",
	"ibm":       "IBM",
	"vsphere":   "VSphere",
	"openstack": "OpenStack",
	"alicloud":  "AlibabaCloud",
}

// platform is the infrastructure the nodes run on, by their providerID;
// "" when unknown.
func platform(nodes []corev1.Node) string {
	for i := range nodes {
		if scheme, _, ok := strings.Cut(nodes[i].Spec.ProviderID, "://"); ok {
			return providerPlatforms[scheme]
		}
	}
	return ""
}

// versionProducts maps a marker in the API server's git version to the
// distribution that puts it there.
var versionProducts = []struct{ marker, product string }{
	{"-eks-", "EKS"},
	{"-gke.", "GKE"},
	{"+k3s", "K3s"},
	{"+rke2", "RKE2"},
}

// product is the Kubernetes distribution, by its version string; "" when unknown.
func product(gitVersion string) string {
	for _, p := range versionProducts {
		if strings.Contains(gitVersion, p.marker) {
			return p.product
		}
	}
	return ""
}
