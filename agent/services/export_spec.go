package services

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/mcs"
)

// The most an ExportedService holds, as its CRD says: endpoint groups,
// endpoints in a group, addresses of an endpoint, and Service ports.
const (
	maxEndpointGroups    = 1000
	maxGroupEndpoints    = 10000
	maxEndpointAddresses = 100
	maxServicePorts      = 100
	// maxSpecBytes keeps an ExportedService well under the hub's request
	// limit (etcd's 1.5 MiB by default), whatever the CRD's caps allow.
	maxSpecBytes = 1 << 20
)

// exportable says why Service svc cannot be exported, or "" when it can:
// ExternalName Services have no endpoints of their own (KEP-1645).
func exportable(svc *corev1.Service) string {
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return fmt.Sprintf("Service %s/%s is of type ExternalName, which cannot be exported: only ClusterIP, NodePort, LoadBalancer and headless Services can",
			svc.Namespace, svc.Name)
	}
	return ""
}

// exportProperties maps Service svc and its ServiceExport se to the
// properties every export of the service must agree on: ClusterIP,
// NodePort and LoadBalancer become ClusterSetIP, clusterIP None becomes
// Headless; node ports and load balancers are not carried over.
func exportProperties(svc *corev1.Service, se *mcsv1beta1.ServiceExport) mcsv1alpha1.ServiceProperties {
	p := mcsv1alpha1.ServiceProperties{
		Type:                  mcsv1alpha1.ClusterSetIP,
		SessionAffinity:       svc.Spec.SessionAffinity,
		SessionAffinityConfig: svc.Spec.SessionAffinityConfig.DeepCopy(),
		InternalTrafficPolicy: clonePtr(svc.Spec.InternalTrafficPolicy),
		TrafficDistribution:   clonePtr(svc.Spec.TrafficDistribution),
		IPFamilies:            slices.Clone(svc.Spec.IPFamilies),
		ExportedLabels:        cloneMap(se.Spec.ExportedLabels),
		ExportedAnnotations:   cloneMap(se.Spec.ExportedAnnotations),
	}
	if svc.Spec.ClusterIP == corev1.ClusterIPNone {
		p.Type = mcsv1alpha1.Headless
	}
	for _, sp := range svc.Spec.Ports {
		proto := sp.Protocol
		if proto == "" {
			proto = corev1.ProtocolTCP
		}
		p.Ports = append(p.Ports, mcsv1alpha1.ServicePort{Name: sp.Name, Protocol: proto, AppProtocol: clonePtr(sp.AppProtocol), Port: sp.Port})
	}
	return p
}

// endpointGroups gathers the endpoints of a Service's EndpointSlices into
// groups of one address type, one set of ports and one zone, in an order
// that depends on the endpoints only, never on how they are spread over
// slices or listed: groups by address type, ports and zone, ports by
// name, protocol and number, endpoints by their addresses. An endpoint
// listed twice (as the EndpointSlice controller may while it moves one
// between slices) is kept once, ready before not ready. Each group lists
// its ready endpoints of one address and no hostname by address alone
// (mcs.ReadyAddress), the others in full.
func endpointGroups(eps []discoveryv1.EndpointSlice) []mcsv1alpha1.EndpointGroup {
	type bucket struct {
		at    discoveryv1.AddressType
		ports []discoveryv1.EndpointPort
		eps   []discoveryv1.Endpoint
	}
	byKey := map[string]*bucket{}
	for i := range eps {
		s := &eps[i]
		if s.AddressType != discoveryv1.AddressTypeIPv4 && s.AddressType != discoveryv1.AddressTypeIPv6 {
			continue // FQDN slices are deprecated and never written for Services
		}
		var ports []discoveryv1.EndpointPort
		for _, p := range s.Ports {
			ports = append(ports, *p.DeepCopy())
		}
		slices.SortFunc(ports, compareEndpointPorts)
		key := groupKey(s.AddressType, ports)
		b := byKey[key]
		if b == nil {
			b = &bucket{at: s.AddressType, ports: ports}
			byKey[key] = b
		}
		for _, e := range s.Endpoints {
			if len(e.Addresses) == 0 {
				continue
			}
			// Only what the hub objects carry: node names, target
			// references and hints stay in the cluster.
			b.eps = append(b.eps, discoveryv1.Endpoint{
				Addresses:  slices.Clone(e.Addresses),
				Conditions: *e.Conditions.DeepCopy(),
				Hostname:   clonePtr(e.Hostname),
				Zone:       clonePtr(e.Zone),
			})
		}
	}
	var groups []mcsv1alpha1.EndpointGroup
	for _, k := range slices.Sorted(maps.Keys(byKey)) {
		b := byKey[k]
		// Duplicates are dropped across zones, before the split by zone.
		slices.SortFunc(b.eps, compareEndpoints)
		b.eps = slices.CompactFunc(b.eps, func(x, y discoveryv1.Endpoint) bool {
			return slices.Equal(x.Addresses, y.Addresses)
		})
		byZone := map[string]*mcsv1alpha1.EndpointGroup{}
		for i := range b.eps {
			e := &b.eps[i]
			zone := deref(e.Zone)
			g := byZone[zone]
			if g == nil {
				g = &mcsv1alpha1.EndpointGroup{AddressType: b.at, Ports: slices.Clone(b.ports), Zone: zone}
				byZone[zone] = g
			}
			if addr, ok := mcs.ReadyAddress(e); ok {
				g.Ready = append(g.Ready, addr)
				continue
			}
			g.Endpoints = append(g.Endpoints, mcsv1alpha1.Endpoint{Addresses: e.Addresses, Conditions: e.Conditions, Hostname: e.Hostname})
		}
		for _, z := range slices.Sorted(maps.Keys(byZone)) {
			groups = append(groups, *byZone[z])
		}
	}
	return groups
}

// groupKey is the identity of an endpoint group: its address type and
// sorted ports.
func groupKey(t discoveryv1.AddressType, ports []discoveryv1.EndpointPort) string {
	data, _ := json.Marshal(ports)
	return string(t) + "/" + string(data)
}

func compareEndpointPorts(a, b discoveryv1.EndpointPort) int {
	return cmp.Or(
		cmp.Compare(deref(a.Name), deref(b.Name)),
		cmp.Compare(deref(a.Protocol), deref(b.Protocol)),
		cmp.Compare(deref(a.Port), deref(b.Port)),
		cmp.Compare(deref(a.AppProtocol), deref(b.AppProtocol)),
	)
}

// compareEndpoints orders endpoints by their addresses, then ready ones
// first, then by everything else, so that of two listings of one endpoint
// the same one comes first.
func compareEndpoints(a, b discoveryv1.Endpoint) int {
	if c := slices.Compare(a.Addresses, b.Addresses); c != 0 {
		return c
	}
	if ra, rb := a.Conditions.Ready == nil || *a.Conditions.Ready, b.Conditions.Ready == nil || *b.Conditions.Ready; ra != rb {
		if ra {
			return -1
		}
		return 1
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return strings.Compare(string(ja), string(jb))
}

// tooLarge says why spec cannot be published in one ExportedService, or
// "" when it can. The hub gets all of a cluster's endpoints or none of
// the change: never half.
func tooLarge(spec *mcsv1alpha1.ExportedServiceSpec) string {
	if n := len(spec.Ports); n > maxServicePorts {
		return fmt.Sprintf("the Service has %d ports, more than the %d an export may have", n, maxServicePorts)
	}
	if n := len(spec.Endpoints); n > maxEndpointGroups {
		return fmt.Sprintf("the Service's endpoints fall into %d groups of address type, ports and zone, more than the %d an ExportedService holds", n, maxEndpointGroups)
	}
	// The limit is per address type and ports, whatever the zones, as
	// one group held them before groups were split by zone.
	perKey := map[string]int{}
	for _, g := range spec.Endpoints {
		key := groupKey(g.AddressType, g.Ports)
		perKey[key] += len(g.Ready) + len(g.Endpoints)
		if n := perKey[key]; n > maxGroupEndpoints {
			_, all := mcs.CountEndpoints(slices.DeleteFunc(slices.Clone(spec.Endpoints), func(o mcsv1alpha1.EndpointGroup) bool {
				return groupKey(o.AddressType, o.Ports) != key
			}))
			return fmt.Sprintf("the Service has %d %s endpoints with ports %s, more than the %d of one address type and ports an ExportedService holds",
				all, g.AddressType, describePorts(g.Ports), maxGroupEndpoints)
		}
		for _, e := range g.Endpoints {
			if n := len(e.Addresses); n > maxEndpointAddresses {
				return fmt.Sprintf("endpoint %s has %d addresses, more than %d", e.Addresses[0], n, maxEndpointAddresses)
			}
		}
	}
	data, err := json.Marshal(spec)
	if err != nil {
		return err.Error()
	}
	if len(data) > maxSpecBytes {
		return fmt.Sprintf("the Service's %d endpoints take %d KiB, more than the %d KiB one ExportedService may hold on the hub",
			countEndpoints(spec.Endpoints), len(data)>>10, maxSpecBytes>>10)
	}
	return ""
}

func countEndpoints(groups []mcsv1alpha1.EndpointGroup) int {
	_, n := mcs.CountEndpoints(groups)
	return n
}

func describePorts(ports []discoveryv1.EndpointPort) string {
	if len(ports) == 0 {
		return "(none)"
	}
	var s []string
	for _, p := range ports {
		s = append(s, fmt.Sprintf("%s/%s/%d", deref(p.Name), deref(p.Protocol), deref(p.Port)))
	}
	return strings.Join(s, ",")
}
