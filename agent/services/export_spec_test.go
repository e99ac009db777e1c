package services

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	mcscrd "sigs.k8s.io/mcs-api/config/crd"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/mcs"
)

func TestExportPropertiesTypes(t *testing.T) {
	se := &mcsv1beta1.ServiceExport{}
	for _, tc := range []struct {
		typ       corev1.ServiceType
		clusterIP string
		want      mcsv1alpha1.ServiceType
	}{
		{corev1.ServiceTypeClusterIP, "10.0.0.1", mcsv1alpha1.ClusterSetIP},
		{corev1.ServiceTypeNodePort, "10.0.0.1", mcsv1alpha1.ClusterSetIP},
		{corev1.ServiceTypeLoadBalancer, "10.0.0.1", mcsv1alpha1.ClusterSetIP},
		{corev1.ServiceTypeClusterIP, corev1.ClusterIPNone, mcsv1alpha1.Headless},
	} {
		svc := &corev1.Service{Spec: corev1.ServiceSpec{Type: tc.typ, ClusterIP: tc.clusterIP}}
		if why := exportable(svc); why != "" {
			t.Errorf("%s %s: not exportable: %s", tc.typ, tc.clusterIP, why)
		}
		if got := exportProperties(svc, se).Type; got != tc.want {
			t.Errorf("%s clusterIP %s: type %s, want %s", tc.typ, tc.clusterIP, got, tc.want)
		}
	}
	ext := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ext"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com"}}
	if why := exportable(ext); !strings.Contains(why, "ExternalName") || !strings.Contains(why, "ns/ext") {
		t.Errorf("ExternalName: exportable says %q, want a refusal naming the type and the Service", why)
	}
}

func TestExportPropertiesFields(t *testing.T) {
	local := corev1.ServiceInternalTrafficPolicyLocal
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"own": "label"}, Annotations: map[string]string{"own": "annotation"}},
		Spec: corev1.ServiceSpec{
			Type:      corev1.ServiceTypeNodePort,
			ClusterIP: "10.0.0.1",
			Ports: []corev1.ServicePort{
				{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, NodePort: 30080, AppProtocol: ptr.To("http")},
				{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53},
				{Name: "bare", Port: 9000},
			},
			SessionAffinity:       corev1.ServiceAffinityClientIP,
			SessionAffinityConfig: &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr.To[int32](60)}},
			InternalTrafficPolicy: &local,
			TrafficDistribution:   ptr.To("PreferClose"),
			IPFamilies:            []corev1.IPFamily{corev1.IPv6Protocol, corev1.IPv4Protocol},
		},
	}
	se := &mcsv1beta1.ServiceExport{Spec: mcsv1beta1.ServiceExportSpec{
		ExportedLabels: map[string]string{"tier": "web"}, ExportedAnnotations: map[string]string{"owner": "team-a"},
	}}
	got := exportProperties(svc, se)
	want := mcsv1alpha1.ServiceProperties{
		Type: mcsv1alpha1.ClusterSetIP,
		Ports: []mcsv1alpha1.ServicePort{
			{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, AppProtocol: ptr.To("http")},
			{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53},
			{Name: "bare", Protocol: corev1.ProtocolTCP, Port: 9000},
		},
		SessionAffinity:       corev1.ServiceAffinityClientIP,
		SessionAffinityConfig: &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr.To[int32](60)}},
		InternalTrafficPolicy: &local,
		TrafficDistribution:   ptr.To("PreferClose"),
		IPFamilies:            []corev1.IPFamily{corev1.IPv6Protocol, corev1.IPv4Protocol},
		ExportedLabels:        map[string]string{"tier": "web"},
		ExportedAnnotations:   map[string]string{"owner": "team-a"},
	}
	if !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("exportProperties:\n got %+v\nwant %+v", got, want)
	}
	// The properties are copies: changing the Service changes no export.
	*svc.Spec.SessionAffinityConfig.ClientIP.TimeoutSeconds = 1
	svc.Spec.IPFamilies[0] = corev1.IPv4Protocol
	se.Spec.ExportedLabels["tier"] = "db"
	if !equality.Semantic.DeepEqual(got, want) {
		t.Error("exportProperties shares memory with the Service or the ServiceExport")
	}
}

func slice(name string, at discoveryv1.AddressType, ports []discoveryv1.EndpointPort, eps ...discoveryv1.Endpoint) discoveryv1.EndpointSlice {
	return discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: name}, AddressType: at, Ports: ports, Endpoints: eps}
}

func ep(ready bool, addrs ...string) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{Addresses: addrs, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready)}, Zone: ptr.To("z1")}
}

func port(name string, p int32) discoveryv1.EndpointPort {
	return discoveryv1.EndpointPort{Name: ptr.To(name), Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(p)}
}

func TestEndpointGroups(t *testing.T) {
	web := []discoveryv1.EndpointPort{port("http", 80), port("admin", 8080)}
	webReordered := []discoveryv1.EndpointPort{port("admin", 8080), port("http", 80)}
	in := []discoveryv1.EndpointSlice{
		slice("a", discoveryv1.AddressTypeIPv4, web, ep(true, "10.0.0.3"), ep(false, "10.0.0.1")),
		slice("b", discoveryv1.AddressTypeIPv4, webReordered, ep(true, "10.0.0.2"), ep(false, "10.0.0.3")),
		slice("c", discoveryv1.AddressTypeIPv6, web, ep(true, "fd00::1")),
		slice("d", discoveryv1.AddressTypeIPv4, []discoveryv1.EndpointPort{port("http", 81)}, ep(true, "10.0.1.1")),
		slice("empty", discoveryv1.AddressTypeIPv4, web),
		slice("fqdn", discoveryv1.AddressTypeFQDN, web, ep(true, "example.com")),
	}
	got := endpointGroups(in)
	if len(got) != 3 {
		t.Fatalf("got %d groups, want 3 (IPv4 web ports, IPv4 port 81, IPv6 web ports): %+v", len(got), got)
	}
	if got[0].AddressType != discoveryv1.AddressTypeIPv4 || got[2].AddressType != discoveryv1.AddressTypeIPv6 {
		t.Errorf("groups not ordered by address type: %s %s %s", got[0].AddressType, got[1].AddressType, got[2].AddressType)
	}
	// The same ports in another order are one group, ports sorted by name.
	var webGroup *mcsv1alpha1.EndpointGroup
	for i := range got[:2] {
		if len(got[i].Ports) == 2 {
			webGroup = &got[i]
		}
	}
	if webGroup == nil {
		t.Fatalf("no IPv4 group with both ports: %+v", got)
	}
	if n := []string{*webGroup.Ports[0].Name, *webGroup.Ports[1].Name}; !slices.Equal(n, []string{"admin", "http"}) {
		t.Errorf("ports %v, want sorted by name", n)
	}
	if webGroup.Zone != "z1" {
		t.Errorf("group zone %q, want the endpoints' z1", webGroup.Zone)
	}
	// 10.0.0.3, ready in one slice and not in another, is kept once, ready:
	// in the ready list, in address order; 10.0.0.1, not ready, in full.
	if !slices.Equal(webGroup.Ready, []string{"10.0.0.2", "10.0.0.3"}) {
		t.Errorf("IPv4 web ready %v, want 10.0.0.2 and 10.0.0.3 once each, in order", webGroup.Ready)
	}
	if len(webGroup.Endpoints) != 1 || webGroup.Endpoints[0].Addresses[0] != "10.0.0.1" || *webGroup.Endpoints[0].Conditions.Ready {
		t.Errorf("IPv4 web endpoints in full %+v, want 10.0.0.1 not ready only", webGroup.Endpoints)
	}

	// Determinism: any order of slices and of their endpoints gives an
	// equal result.
	r := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		shuffled := make([]discoveryv1.EndpointSlice, len(in))
		for i := range in {
			shuffled[i] = *in[i].DeepCopy()
			r.Shuffle(len(shuffled[i].Endpoints), func(a, b int) {
				shuffled[i].Endpoints[a], shuffled[i].Endpoints[b] = shuffled[i].Endpoints[b], shuffled[i].Endpoints[a]
			})
			r.Shuffle(len(shuffled[i].Ports), func(a, b int) {
				shuffled[i].Ports[a], shuffled[i].Ports[b] = shuffled[i].Ports[b], shuffled[i].Ports[a]
			})
		}
		r.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
		if again := endpointGroups(shuffled); !reflect.DeepEqual(again, got) {
			t.Fatalf("another order of the same slices gives another result:\n%+v\n%+v", again, got)
		}
	}
	if g := endpointGroups(nil); g != nil {
		t.Errorf("no slices: %+v, want nil", g)
	}
	if g := endpointGroups([]discoveryv1.EndpointSlice{slice("placeholder", discoveryv1.AddressTypeIPv4, web)}); g != nil {
		t.Errorf("a slice without endpoints: %+v, want no group", g)
	}
}

// TestEndpointGroupsCompact: only ready, serving, not terminating
// endpoints of one address and no hostname are listed by address; every
// other keeps its conditions, addresses and hostname; zones make groups.
func TestEndpointGroupsCompact(t *testing.T) {
	cond := func(ready, serving, terminating *bool) discoveryv1.EndpointConditions {
		return discoveryv1.EndpointConditions{Ready: ready, Serving: serving, Terminating: terminating}
	}
	yes, no := ptr.To(true), ptr.To(false)
	e := func(addr string, c discoveryv1.EndpointConditions, zone string) discoveryv1.Endpoint {
		d := discoveryv1.Endpoint{Addresses: []string{addr}, Conditions: c, NodeName: ptr.To("node-1")}
		if zone != "" {
			d.Zone = ptr.To(zone)
		}
		return d
	}
	named := e("10.0.0.9", cond(yes, yes, no), "a")
	named.Hostname = ptr.To("web-0")
	two := e("10.0.0.8", cond(yes, yes, no), "a")
	two.Addresses = append(two.Addresses, "10.0.0.80")
	in := []discoveryv1.EndpointSlice{slice("s", discoveryv1.AddressTypeIPv4, nil,
		e("10.0.0.1", cond(yes, yes, no), "a"),
		e("10.0.0.2", cond(nil, nil, nil), "a"), // unset: ready, serving, not terminating
		e("10.0.0.3", cond(no, no, no), "a"),
		e("10.0.0.4", cond(yes, no, no), "a"),
		e("10.0.0.5", cond(no, yes, yes), "a"),
		e("10.0.0.6", cond(yes, yes, no), "b"),
		e("10.0.0.7", cond(yes, yes, no), ""),
		named, two,
	)}
	got := endpointGroups(in)
	if len(got) != 3 || got[0].Zone != "" || got[1].Zone != "a" || got[2].Zone != "b" {
		t.Fatalf("groups %+v, want one per zone (none, a, b), in that order", got)
	}
	if !slices.Equal(got[0].Ready, []string{"10.0.0.7"}) || len(got[0].Endpoints) != 0 {
		t.Errorf("no zone: %+v", got[0])
	}
	if !slices.Equal(got[2].Ready, []string{"10.0.0.6"}) || len(got[2].Endpoints) != 0 {
		t.Errorf("zone b: %+v", got[2])
	}
	a := got[1]
	if !slices.Equal(a.Ready, []string{"10.0.0.1", "10.0.0.2"}) {
		t.Errorf("zone a ready %v, want 10.0.0.1 and the unset 10.0.0.2", a.Ready)
	}
	var full []string
	for _, x := range a.Endpoints {
		full = append(full, x.Addresses[0])
	}
	if !slices.Equal(full, []string{"10.0.0.3", "10.0.0.4", "10.0.0.5", "10.0.0.8", "10.0.0.9"}) {
		t.Errorf("zone a in full %v, want the not ready, not serving, terminating, two-address and named ones", full)
	}
	for _, x := range a.Endpoints {
		switch x.Addresses[0] {
		case "10.0.0.5":
			if !*x.Conditions.Terminating || *x.Conditions.Ready || !*x.Conditions.Serving {
				t.Errorf("10.0.0.5 conditions %+v", x.Conditions)
			}
		case "10.0.0.8":
			if !slices.Equal(x.Addresses, []string{"10.0.0.8", "10.0.0.80"}) {
				t.Errorf("10.0.0.8 addresses %v, want both", x.Addresses)
			}
		case "10.0.0.9":
			if deref(x.Hostname) != "web-0" {
				t.Errorf("10.0.0.9 hostname %v", x.Hostname)
			}
		}
	}

	// Expanded again, the groups hold every endpoint as the slice had it
	// (unset conditions made explicit, node names left in the cluster).
	var back []discoveryv1.Endpoint
	for i := range got {
		back = append(back, mcs.Endpoints(&got[i])...)
	}
	byAddr := func(x, y discoveryv1.Endpoint) int { return strings.Compare(x.Addresses[0], y.Addresses[0]) }
	slices.SortFunc(back, byAddr)
	want := slices.Clone(in[0].Endpoints)
	slices.SortFunc(want, byAddr)
	for i := range want {
		want[i].NodeName = nil
		c := &want[i].Conditions
		c.Ready, c.Serving, c.Terminating = ptr.To(ptr.Deref(c.Ready, true)), ptr.To(ptr.Deref(c.Serving, true)), ptr.To(ptr.Deref(c.Terminating, false))
	}
	if !equality.Semantic.DeepEqual(back, want) {
		t.Errorf("expanded groups differ from the slice:\n got %+v\nwant %+v", back, want)
	}
}

func TestTooLarge(t *testing.T) {
	spec := func(groups, perGroup int) *mcsv1alpha1.ExportedServiceSpec {
		s := &mcsv1alpha1.ExportedServiceSpec{Namespace: "ns", Name: "svc"}
		for g := range groups {
			eg := mcsv1alpha1.EndpointGroup{AddressType: discoveryv1.AddressTypeIPv4, Ports: []discoveryv1.EndpointPort{port("p", int32(g+1))}, Zone: "us-east-1a"}
			for i := range perGroup {
				addr := "10.0." + itoa(i/250) + "." + itoa(i%250)
				if i%2 == 0 {
					eg.Ready = append(eg.Ready, addr) // the ready list counts too
					continue
				}
				eg.Endpoints = append(eg.Endpoints, mcsv1alpha1.Endpoint{
					Addresses:  []string{addr},
					Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true), Serving: ptr.To(true), Terminating: ptr.To(false)},
					Hostname:   ptr.To("web-7d9f8c6b5-" + itoa(i)),
				})
			}
			s.Endpoints = append(s.Endpoints, eg)
		}
		return s
	}
	if why := tooLarge(spec(3, 100)); why != "" {
		t.Errorf("300 endpoints refused: %s", why)
	}
	if why := tooLarge(spec(maxEndpointGroups+1, 1)); !strings.Contains(why, "1001 groups") {
		t.Errorf("1001 groups: %q, want a refusal naming the count", why)
	}
	if why := tooLarge(spec(1, maxGroupEndpoints+1)); !strings.Contains(why, "10001 IPv4 endpoints") || !strings.Contains(why, "10000") {
		t.Errorf("10001 endpoints: %q, want a refusal naming the count and the limit", why)
	}
	// Zones split a group; the limit is of one address type and ports.
	zones := spec(1, 6000)
	other := *zones.Endpoints[0].DeepCopy()
	other.Zone = "us-east-1b"
	zones.Endpoints = append(zones.Endpoints, other)
	if why := tooLarge(zones); !strings.Contains(why, "12000 IPv4 endpoints") {
		t.Errorf("6000 endpoints in each of two zones, same ports: %q, want a refusal naming all 12000", why)
	}
	if why := tooLarge(spec(2, 9000)); !strings.Contains(why, "KiB") {
		t.Errorf("18000 endpoints (over the size limit): %q, want a refusal naming the size", why)
	}
}

func itoa(i int) string {
	return string(rune('0'+i/100%10)) + string(rune('0'+i/10%10)) + string(rune('0'+i%10))
}

func TestApplyExportStatus(t *testing.T) {
	st := exportStatus{
		generation: 3,
		valid:      condition(mcsv1beta1.ServiceExportConditionValid, metav1.ConditionTrue, mcsv1beta1.ServiceExportReasonValid, "ok"),
		ready:      condition(mcsv1beta1.ServiceExportConditionReady, metav1.ConditionFalse, mcsv1beta1.ServiceExportReasonPending, "waiting"),
		conflict:   conflictOf(nil),
	}
	first := applyExportStatus(nil, st)
	if len(first) != 3 {
		t.Fatalf("conditions %+v, want Valid, Ready, Conflict", first)
	}
	for _, c := range first {
		if c.ObservedGeneration != 3 {
			t.Errorf("%s: observedGeneration %d, want 3", c.Type, c.ObservedGeneration)
		}
	}
	// The same status again changes nothing, whatever the clock says: no write.
	st2 := st
	st2.valid.LastTransitionTime = metav1.NewTime(st.valid.LastTransitionTime.Add(3600e9))
	if again := applyExportStatus(first, st2); !equality.Semantic.DeepEqual(again, first) {
		t.Errorf("the same status rewrote the conditions:\n%+v\n%+v", again, first)
	}
	// Invalid: Conflict goes.
	st3 := exportStatus{generation: 4, valid: condition(mcsv1beta1.ServiceExportConditionValid, metav1.ConditionFalse, mcsv1beta1.ServiceExportReasonNoService, "no"), ready: st.ready}
	if got := applyExportStatus(first, st3); len(got) != 2 || got[0].Reason != "NoService" {
		t.Errorf("invalid export: %+v, want Valid=False NoService and Ready only", got)
	}
}

func TestMCSCRDs(t *testing.T) {
	crds, err := mcsCRDs()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range crds {
		names = append(names, c.Name)
		if schemaRevision(c) < 0 {
			t.Errorf("%s has no schema revision label", c.Name)
		}
	}
	if !slices.Equal(names, []string{"serviceexports.multicluster.x-k8s.io", "serviceimports.multicluster.x-k8s.io"}) {
		t.Errorf("CRDs %v", names)
	}
	newer := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{mcscrd.CustomResourceDefinitionSchemaRevisionLabel: "7"}}}
	if schemaRevision(newer) != 7 || schemaRevision(&apiextensionsv1.CustomResourceDefinition{}) != -1 {
		t.Error("schemaRevision misreads the label")
	}
}
