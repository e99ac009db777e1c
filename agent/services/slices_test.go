package services

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/mcs"
)

// endpoints returns n ready IPv4 endpoints 10.<base>.x.y.
func endpoints(base, n int) []mcsv1alpha1.Endpoint {
	var out []mcsv1alpha1.Endpoint
	for i := range n {
		out = append(out, mcsv1alpha1.Endpoint{
			Addresses:  []string{fmt.Sprintf("10.%d.%d.%d", base, i/250, i%250+1)},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
		})
	}
	return out
}

func httpPort() []discoveryv1.EndpointPort {
	return []discoveryv1.EndpointPort{{Name: ptr.To("http"), Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To[int32](8080)}}
}

func exampleImport(typ mcsv1alpha1.ServiceType, clusters ...mcsv1alpha1.ImportedCluster) *mcsv1alpha1.ImportedService {
	return &mcsv1alpha1.ImportedService{
		ObjectMeta: metav1.ObjectMeta{Namespace: mcs.SetNamespace("prod"), Name: "shop.web"},
		Spec: mcsv1alpha1.ImportedServiceSpec{
			ClusterSet: "prod", Namespace: "shop", Name: "web",
			ServiceProperties: mcsv1alpha1.ServiceProperties{
				Type:                  typ,
				Ports:                 []mcsv1alpha1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}, {Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53}},
				SessionAffinity:       corev1.ServiceAffinityClientIP,
				SessionAffinityConfig: &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr.To[int32](60)}},
				InternalTrafficPolicy: ptr.To(corev1.ServiceInternalTrafficPolicyCluster),
				TrafficDistribution:   ptr.To("PreferClose"),
				IPFamilies:            []corev1.IPFamily{corev1.IPv4Protocol},
				ExportedLabels:        map[string]string{"team": "shop"},
				ExportedAnnotations:   map[string]string{"note": "hi"},
			},
			Clusters: clusters,
		},
	}
}

var owner = metav1.OwnerReference{APIVersion: "multicluster.x-k8s.io/v1beta1", Kind: "ServiceImport", Name: "web", UID: "u-1", Controller: ptr.To(false)}

func TestDesiredServiceImport(t *testing.T) {
	is := exampleImport(mcsv1alpha1.ClusterSetIP, mcsv1alpha1.ImportedCluster{Name: "b", Available: true}, mcsv1alpha1.ImportedCluster{Name: "a"})
	si := desiredServiceImport("prod", is, []string{"10.96.0.7"}, []corev1.IPFamily{corev1.IPv4Protocol})
	if si.Namespace != "shop" || si.Name != "web" {
		t.Errorf("ServiceImport %s/%s, want shop/web", si.Namespace, si.Name)
	}
	wantLabels := map[string]string{"team": "shop", mcs.ClusterSetLabel: "prod", "app.kubernetes.io/managed-by": mcs.ManagedBy}
	if !maps.Equal(si.Labels, wantLabels) {
		t.Errorf("labels %v, want %v", si.Labels, wantLabels)
	}
	wantAnn := map[string]string{"note": "hi", mcs.DerivedServiceAnnotation: mcs.DerivedServiceName("shop", "web")}
	if !maps.Equal(si.Annotations, wantAnn) {
		t.Errorf("annotations %v, want %v", si.Annotations, wantAnn)
	}
	if si.Spec.Type != mcsv1beta1.ClusterSetIP || !slices.Equal(si.Spec.IPs, []string{"10.96.0.7"}) || len(si.Spec.Ports) != 2 ||
		si.Spec.SessionAffinity != corev1.ServiceAffinityClientIP || *si.Spec.SessionAffinityConfig.ClientIP.TimeoutSeconds != 60 ||
		*si.Spec.InternalTrafficPolicy != corev1.ServiceInternalTrafficPolicyCluster || *si.Spec.TrafficDistribution != "PreferClose" {
		t.Errorf("spec %+v", si.Spec)
	}
	if got := si.Spec.Ports[1]; got.Name != "dns" || got.Protocol != corev1.ProtocolUDP || got.Port != 53 {
		t.Errorf("port %+v", got)
	}
	// The exported maps are the hub's: the ServiceImport's own are copies.
	si.Labels["x"] = "y"
	if _, ok := is.Spec.ExportedLabels["x"]; ok {
		t.Error("desiredServiceImport shares the ImportedService's label map")
	}

	st := desiredStatus(is, metav1.ConditionTrue, mcsv1beta1.ServiceImportReasonReady, "ok")
	if !slices.Equal(st.Clusters, []mcsv1beta1.ClusterStatus{{Cluster: "a"}, {Cluster: "b"}}) {
		t.Errorf("status.clusters %v, want a and b (unavailable clusters are exporters too)", st.Clusters)
	}
	if len(st.Conditions) != 1 || st.Conditions[0].Type != "Ready" || st.Conditions[0].Status != metav1.ConditionTrue || st.Conditions[0].Reason != "Ready" {
		t.Errorf("conditions %v", st.Conditions)
	}

	h := desiredServiceImport("prod", exampleImport(mcsv1alpha1.Headless), []string{"10.96.0.7"}, nil)
	if h.Spec.Type != mcsv1beta1.Headless || len(h.Spec.IPs) != 0 {
		t.Errorf("headless spec %+v: no ips", h.Spec)
	}
	if _, ok := h.Annotations[mcs.DerivedServiceAnnotation]; ok {
		t.Error("a headless import names a derived Service")
	}
}

func TestDesiredDerivedService(t *testing.T) {
	svc := desiredDerivedService("prod", exampleImport(mcsv1alpha1.ClusterSetIP), owner)
	if svc.Name != mcs.DerivedServiceName("shop", "web") || svc.Namespace != "shop" {
		t.Errorf("name %s/%s", svc.Namespace, svc.Name)
	}
	if len(svc.Spec.Selector) != 0 || svc.Spec.Type != corev1.ServiceTypeClusterIP {
		t.Errorf("a derived Service has no selector and is ClusterIP: %+v", svc.Spec)
	}
	if len(svc.OwnerReferences) != 1 || svc.OwnerReferences[0] != owner {
		t.Errorf("owner references %v", svc.OwnerReferences)
	}
	if len(svc.Spec.Ports) != 2 || svc.Spec.Ports[0].Port != 80 || svc.Spec.Ports[0].TargetPort.IntValue() != 80 || svc.Spec.Ports[1].Protocol != corev1.ProtocolUDP {
		t.Errorf("ports %+v", svc.Spec.Ports)
	}
	if !slices.Equal(svc.Spec.IPFamilies, []corev1.IPFamily{corev1.IPv4Protocol}) || *svc.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack {
		t.Errorf("families %v %v", svc.Spec.IPFamilies, svc.Spec.IPFamilyPolicy)
	}
	want := map[string]string{mcs.ClusterSetLabel: "prod", "app.kubernetes.io/managed-by": mcs.ManagedBy, mcs.ServiceNameLabel: "web"}
	if !maps.Equal(svc.Labels, want) {
		t.Errorf("labels %v, want %v", svc.Labels, want)
	}
}

func TestDesiredSlicesSplit(t *testing.T) {
	is := exampleImport(mcsv1alpha1.ClusterSetIP, mcsv1alpha1.ImportedCluster{Name: "east", Available: true, Endpoints: []mcsv1alpha1.EndpointGroup{
		{AddressType: discoveryv1.AddressTypeIPv4, Ports: httpPort(), Endpoints: endpoints(1, 250)},
	}})
	got := desiredSlices("prod", is, owner)
	if len(got) != 3 {
		t.Fatalf("250 endpoints in %d slices, want 3", len(got))
	}
	var sizes []int
	seen := map[string]bool{}
	for _, s := range got {
		sizes = append(sizes, len(s.Endpoints))
		if seen[s.Name] {
			t.Errorf("two slices named %s", s.Name)
		}
		seen[s.Name] = true
		if errs := validation.IsDNS1123Subdomain(s.Name); len(errs) > 0 {
			t.Errorf("slice name %q: %v", s.Name, errs)
		}
		if len(s.OwnerReferences) != 1 || s.OwnerReferences[0] != owner || *s.OwnerReferences[0].Controller {
			t.Errorf("owner references %v: the ServiceImport, controller=false", s.OwnerReferences)
		}
	}
	if !slices.Equal(sizes, []int{100, 100, 50}) {
		t.Errorf("slice sizes %v, want 100, 100, 50", sizes)
	}
	// Every endpoint exactly once.
	addrs := map[string]int{}
	for _, s := range got {
		for _, e := range s.Endpoints {
			addrs[e.Addresses[0]]++
		}
	}
	if len(addrs) != 250 {
		t.Errorf("%d distinct endpoints, want 250", len(addrs))
	}

	// Deterministic: the same names, whatever order the hub lists the
	// endpoints in.
	rev := is.DeepCopy()
	slices.Reverse(rev.Spec.Clusters[0].Endpoints[0].Endpoints)
	again := desiredSlices("prod", rev, owner)
	for i := range got {
		if got[i].Name != again[i].Name || len(got[i].Endpoints) != len(again[i].Endpoints) || got[i].Endpoints[0].Addresses[0] != again[i].Endpoints[0].Addresses[0] {
			t.Errorf("slice %d differs when the endpoints come in another order: %s vs %s", i, got[i].Name, again[i].Name)
		}
	}
}

func TestDesiredSlicesLabels(t *testing.T) {
	is := exampleImport(mcsv1alpha1.ClusterSetIP, mcsv1alpha1.ImportedCluster{Name: "east", Available: true, Endpoints: []mcsv1alpha1.EndpointGroup{
		{AddressType: discoveryv1.AddressTypeIPv4, Ports: httpPort(), Endpoints: endpoints(1, 1)},
	}})
	s := desiredSlices("prod", is, owner)[0]
	want := map[string]string{
		"multicluster.kubernetes.io/service-name":   "web",
		"multicluster.kubernetes.io/source-cluster": "east",
		"endpointslice.kubernetes.io/managed-by":    mcs.ManagedBy,
		mcs.ClusterSetLabel:                         "prod",
		"kubernetes.io/service-name":                mcs.DerivedServiceName("shop", "web"),
	}
	if !maps.Equal(s.Labels, want) {
		t.Errorf("ClusterSetIP slice labels %v, want %v", s.Labels, want)
	}
	if s.Labels["endpointslice.kubernetes.io/managed-by"] == "endpointslice-controller.k8s.io" {
		t.Error("the built-in controller would own the slice")
	}
	is.Spec.Type = mcsv1alpha1.Headless
	s = desiredSlices("prod", is, owner)[0]
	delete(want, "kubernetes.io/service-name")
	if !maps.Equal(s.Labels, want) {
		t.Errorf("Headless slice labels %v, want %v (no kubernetes.io/service-name: no derived Service)", s.Labels, want)
	}
}

func TestDesiredSlicesFamiliesHostnamesAvailability(t *testing.T) {
	v6 := []mcsv1alpha1.Endpoint{{Addresses: []string{"fd00::2"}, Hostname: ptr.To("web-0"), Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}}
	v4 := []mcsv1alpha1.Endpoint{{Addresses: []string{"10.0.0.2"}, Hostname: ptr.To("web-0"), Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}},
		{Addresses: []string{"10.0.0.3"}, Hostname: ptr.To("web-1"), Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(false)}}}
	is := exampleImport(mcsv1alpha1.Headless,
		mcsv1alpha1.ImportedCluster{Name: "east", Available: true, Endpoints: []mcsv1alpha1.EndpointGroup{
			{AddressType: discoveryv1.AddressTypeIPv4, Ports: []discoveryv1.EndpointPort{{Port: ptr.To[int32](80)}}, Endpoints: v4},
			{AddressType: discoveryv1.AddressTypeIPv6, Ports: []discoveryv1.EndpointPort{{Port: ptr.To[int32](80)}}, Zone: "z1", Endpoints: v6},
		}},
		mcsv1alpha1.ImportedCluster{Name: "west", Available: false, Endpoints: []mcsv1alpha1.EndpointGroup{
			{AddressType: discoveryv1.AddressTypeIPv4, Endpoints: endpoints(2, 3)},
		}},
	)
	got := desiredSlices("prod", is, owner)
	if len(got) != 2 {
		t.Fatalf("%d slices, want one per family of the available cluster only", len(got))
	}
	if got[0].AddressType != discoveryv1.AddressTypeIPv4 || got[1].AddressType != discoveryv1.AddressTypeIPv6 || got[0].Name == got[1].Name {
		t.Errorf("slices %s (%s), %s (%s)", got[0].Name, got[0].AddressType, got[1].Name, got[1].AddressType)
	}
	if h := got[0].Endpoints; len(h) != 2 || *h[0].Hostname != "web-0" || *h[1].Hostname != "web-1" || *h[1].Conditions.Ready {
		t.Errorf("IPv4 endpoints %+v: hostnames and conditions kept", h)
	}
	if e := got[1].Endpoints[0]; *e.Hostname != "web-0" || *e.Zone != "z1" || e.Addresses[0] != "fd00::2" {
		t.Errorf("IPv6 endpoint %+v", e)
	}
	// Ports as the API server stores them: protocol TCP, name "".
	if p := got[0].Ports[0]; *p.Protocol != corev1.ProtocolTCP || p.Name == nil || *p.Name != "" {
		t.Errorf("port %+v", p)
	}
	for _, s := range got {
		if s.Labels["multicluster.kubernetes.io/source-cluster"] != "east" {
			t.Errorf("slice %s from %s: only available clusters carry endpoints", s.Name, s.Labels["multicluster.kubernetes.io/source-cluster"])
		}
	}
}

func TestSliceNames(t *testing.T) {
	a := sliceName("shop", "web", "east", discoveryv1.AddressTypeIPv4, httpPort(), 0)
	if a != sliceName("shop", "web", "east", discoveryv1.AddressTypeIPv4, httpPort(), 0) {
		t.Error("slice names are not deterministic")
	}
	for _, other := range []string{
		sliceName("shop", "web", "west", discoveryv1.AddressTypeIPv4, httpPort(), 0),
		sliceName("shop", "web", "east", discoveryv1.AddressTypeIPv6, httpPort(), 0),
		sliceName("shop", "web", "east", discoveryv1.AddressTypeIPv4, httpPort(), 1),
		sliceName("shop", "web", "east", discoveryv1.AddressTypeIPv4, nil, 0),
		sliceName("other", "web", "east", discoveryv1.AddressTypeIPv4, httpPort(), 0),
	} {
		if other == a {
			t.Errorf("two different slices share the name %s", a)
		}
	}
	long := sliceName("n", "a23456789012345678901234567890123456789012345678901234567890123", "c23456789012345678901234567890123456789012345678901234567890123", discoveryv1.AddressTypeIPv4, nil, 0)
	if errs := validation.IsDNS1123Subdomain(long); len(errs) > 0 {
		t.Errorf("the longest slice name %q: %v", long, errs)
	}
}

func TestImportKey(t *testing.T) {
	ns, name, ok := splitImportKey(importKey("shop", "web"))
	if !ok || ns != "shop" || name != "web" {
		t.Errorf("splitImportKey(importKey(shop, web)) = %q %q %v", ns, name, ok)
	}
	if _, _, ok := splitImportKey("nodot"); ok {
		t.Error("a key without a dot splits")
	}
}

func TestClusterIPs(t *testing.T) {
	svc := &corev1.Service{Spec: corev1.ServiceSpec{ClusterIPs: []string{"10.96.0.1", "fd00::1"}, IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}}}
	ips, fams := clusterIPs(svc)
	if !slices.Equal(ips, []string{"10.96.0.1", "fd00::1"}) || !slices.Equal(fams, []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}) {
		t.Errorf("clusterIPs = %v %v", ips, fams)
	}
	if ips, _ := clusterIPs(&corev1.Service{Spec: corev1.ServiceSpec{ClusterIPs: []string{"None"}}}); ips != nil {
		t.Errorf("a headless Service has cluster IPs %v", ips)
	}
}

// TestDesiredSlicesZones: the hub's groups of one address type and ports
// in several zones make one series of slices, named as without zones,
// each endpoint with its zone; the ready list expands to ready, serving,
// not terminating endpoints.
func TestDesiredSlicesZones(t *testing.T) {
	is := exampleImport(mcsv1alpha1.ClusterSetIP, mcsv1alpha1.ImportedCluster{Name: "east", Available: true, Endpoints: []mcsv1alpha1.EndpointGroup{
		{AddressType: discoveryv1.AddressTypeIPv4, Ports: httpPort(), Ready: []string{"10.0.0.1", "10.0.0.4"}},
		{AddressType: discoveryv1.AddressTypeIPv4, Ports: httpPort(), Zone: "a", Ready: []string{"10.0.0.3"},
			Endpoints: []mcsv1alpha1.Endpoint{{Addresses: []string{"10.0.0.2"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(false)}}}},
	}})
	got := desiredSlices("prod", is, owner)
	if len(got) != 1 {
		t.Fatalf("%d slices, want one for both zones", len(got))
	}
	if want := sliceName("shop", "web", "east", discoveryv1.AddressTypeIPv4, slicePorts(httpPort()), 0); got[0].Name != want {
		t.Errorf("slice name %s, want %s (as without zones)", got[0].Name, want)
	}
	var addrs, zones []string
	for _, e := range got[0].Endpoints {
		addrs = append(addrs, e.Addresses[0])
		zones = append(zones, ptr.Deref(e.Zone, "-"))
	}
	if !slices.Equal(addrs, []string{"10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"}) || !slices.Equal(zones, []string{"-", "a", "a", "-"}) {
		t.Errorf("endpoints %v in zones %v, want address order with each one's zone", addrs, zones)
	}
	for _, e := range got[0].Endpoints {
		c := e.Conditions
		ready := e.Addresses[0] != "10.0.0.2"
		if ready && (!*c.Ready || !*c.Serving || *c.Terminating) {
			t.Errorf("%s from the ready list: conditions %+v, want ready, serving, not terminating", e.Addresses[0], c)
		}
		if !ready && (c.Ready == nil || *c.Ready || c.Serving != nil) {
			t.Errorf("%s in full: conditions %+v, want them as the hub has them", e.Addresses[0], c)
		}
	}
}
