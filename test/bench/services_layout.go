package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/mcs"
)

// servicesLayout is who exports what in the services benchmark: service
// j (of services) is exported by exporters clusters, each with endpoints
// endpoints, all in namespace; the first real clusters are real spokes
// with real agents, the others hollow agents.
type servicesLayout struct {
	clusters                      []string
	real                          int
	services, endpoints, exporter int
	namespace                     string
	// exportedAt is every export's ServiceExport creationTimestamp (the
	// hollow clusters'; the real spokes' are their own).
	exportedAt metav1.Time
	// index maps an object name (<ns>.<name>) to its service's number.
	index map[string]int
}

func newServicesLayout(clusters []string, real, services, endpoints, exporters int) (*servicesLayout, error) {
	switch {
	case len(clusters) == 0 || services <= 0 || endpoints <= 0:
		return nil, fmt.Errorf("the services benchmark needs clusters (%d), services (%d) and endpoints (%d)", len(clusters), services, endpoints)
	case real < 0 || real > len(clusters):
		return nil, fmt.Errorf("-services-real-spokes %d: between 0 and -services-clusters (%d)", real, len(clusters))
	case exporters <= 0 || exporters > len(clusters):
		return nil, fmt.Errorf("-services-exporters %d: between 1 and -services-clusters (%d)", exporters, len(clusters))
	case endpoints > 100:
		return nil, fmt.Errorf("-services-endpoints %d: at most 100 (one EndpointSlice per exporting cluster)", endpoints)
	case len(clusters)*services*endpoints >= 1<<24:
		return nil, fmt.Errorf("%d clusters × %d services × %d endpoints: the addresses of 10.0.0.0/8 run out; make one smaller", len(clusters), services, endpoints)
	}
	l := &servicesLayout{clusters: clusters, real: real, services: services, endpoints: endpoints, exporter: exporters,
		namespace: "mcs-bench", exportedAt: metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second)), index: map[string]int{}}
	for j := range services {
		l.index[l.object(j)] = j
	}
	return l, nil
}

// name is service j's name.
func (l *servicesLayout) name(j int) string { return fmt.Sprintf("svc-%04d", j) }

// object is service j's ExportedService and ImportedService name.
func (l *servicesLayout) object(j int) string { return mcs.ObjectName(l.namespace, l.name(j)) }

// exportersOf are the clusters (by number) exporting service j, spread
// evenly over the fleet.
func (l *servicesLayout) exportersOf(j int) []int {
	n := len(l.clusters)
	stride := max(1, n/l.exporter)
	out := make([]int, l.exporter)
	for k := range out {
		out[k] = (j + k*stride) % n
	}
	return out
}

// exportsOf are the services (by number) cluster c exports.
func (l *servicesLayout) exportsOf(c int) []int {
	var out []int
	for j := range l.services {
		for _, e := range l.exportersOf(j) {
			if e == c {
				out = append(out, j)
				break
			}
		}
	}
	return out
}

// isReal says whether cluster name is a real spoke.
func (l *servicesLayout) isReal(name string) bool {
	for _, n := range l.clusters[:l.real] {
		if n == name {
			return true
		}
	}
	return false
}

// addr is the address of endpoint e of service j in cluster c.
func (l *servicesLayout) addr(c, j, e int) string {
	return endpointAddr(10, (c*l.services+j)*l.endpoints+e)
}

// endpointPorts are the ports of every endpoint.
func endpointPorts() []discoveryv1.EndpointPort {
	return []discoveryv1.EndpointPort{{Name: ptr.To("http"), Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To[int32](8080)}}
}

// endpoints are cluster c's endpoints of service j, the first with
// address first unless it is empty, as an EndpointSlice holds them.
func (l *servicesLayout) endpointList(c, j int, first string) []discoveryv1.Endpoint {
	out := make([]discoveryv1.Endpoint, l.endpoints)
	for e := range out {
		a := l.addr(c, j, e)
		if e == 0 && first != "" {
			a = first
		}
		out[e] = discoveryv1.Endpoint{Addresses: []string{a},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true), Serving: ptr.To(true), Terminating: ptr.To(false)}}
	}
	return out
}

// endpointGroups are cluster c's endpoints of service j as an
// ExportedService holds them, as the agent compacts them: every one
// ready, of one address and no hostname, so listed by address alone, in
// address order.
func (l *servicesLayout) endpointGroups(c, j int, first string) []mcsv1alpha1.EndpointGroup {
	g := mcsv1alpha1.EndpointGroup{AddressType: discoveryv1.AddressTypeIPv4, Ports: endpointPorts()}
	for _, e := range l.endpointList(c, j, first) {
		addr, ok := mcs.ReadyAddress(&e)
		if !ok {
			g.Endpoints = append(g.Endpoints, mcsv1alpha1.Endpoint{Addresses: e.Addresses, Conditions: e.Conditions})
			continue
		}
		g.Ready = append(g.Ready, addr)
	}
	slices.Sort(g.Ready)
	return []mcsv1alpha1.EndpointGroup{g}
}

// exportedService is hollow cluster c's ExportedService of service j, as
// the agent writes it for a ClusterIP Service of one port.
func (l *servicesLayout) exportedService(c, j int) *mcsv1alpha1.ExportedService {
	cluster, name := l.clusters[c], l.name(j)
	return &mcsv1alpha1.ExportedService{
		TypeMeta: metav1.TypeMeta{APIVersion: mcsv1alpha1.GroupVersion.String(), Kind: "ExportedService"},
		ObjectMeta: metav1.ObjectMeta{Name: l.object(j), Namespace: cluster, Labels: map[string]string{
			mcs.ClusterLabel: cluster, mcs.ServiceNamespaceLabel: l.namespace, mcs.ServiceNameLabel: name}},
		Spec: mcsv1alpha1.ExportedServiceSpec{
			Namespace: l.namespace, Name: name, ExportCreationTimestamp: l.exportedAt,
			ServiceProperties: mcsv1alpha1.ServiceProperties{
				Type:            mcsv1alpha1.ClusterSetIP,
				Ports:           []mcsv1alpha1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}},
				SessionAffinity: corev1.ServiceAffinityNone,
				IPFamilies:      []corev1.IPFamily{corev1.IPv4Protocol},
			},
			Endpoints: l.endpointGroups(c, j, ""),
		},
	}
}

// serviceOf is the number of the service of an object name, or -1.
func (l *servicesLayout) serviceOf(object string) int {
	if j, ok := l.index[object]; ok {
		return j
	}
	return -1
}

// describe says in a line who exports what.
func (l *servicesLayout) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d clusters (%d real spokes with real agents, %d hollow), %d services in namespace %s, each exported by %d cluster(s) with %d endpoints",
		len(l.clusters), l.real, len(l.clusters)-l.real, l.services, l.namespace, l.exporter, l.endpoints)
	return b.String()
}
