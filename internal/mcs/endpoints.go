package mcs

import (
	"slices"
	"strings"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/utils/ptr"

	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
)

// An endpoint group of the hub objects lists its common endpoints, ready
// with one address and no hostname, by their address alone (ready), and
// the others in full (endpoints). ReadyAddress says which endpoints are
// common; Endpoints expands a group back into EndpointSlice endpoints.
// The two are each other's inverse: for every endpoint e of a slice,
// Endpoints of the group that holds it lists e again, its conditions made
// explicit where the slice left them unset (an unset ready or serving
// means true, an unset terminating false, as EndpointSlices define them).

// ReadyAddress returns the address that stands for endpoint e in a
// group's ready list, and whether e may be listed there: ready and
// serving (true or unset), not terminating (false or unset), with exactly
// one address and no hostname. The endpoint's zone is its group's.
func ReadyAddress(e *discoveryv1.Endpoint) (string, bool) {
	c := e.Conditions
	if len(e.Addresses) != 1 || e.Hostname != nil ||
		!ptr.Deref(c.Ready, true) || !ptr.Deref(c.Serving, true) || ptr.Deref(c.Terminating, false) {
		return "", false
	}
	return e.Addresses[0], true
}

// Endpoints returns the endpoints of group g as an EndpointSlice holds
// them, in the order of their first address: each of g.Ready ready,
// serving and not terminating, and each of g.Endpoints as it is, all with
// g's zone. Nothing is shared with g.
func Endpoints(g *mcsv1alpha1.EndpointGroup) []discoveryv1.Endpoint {
	out := make([]discoveryv1.Endpoint, 0, len(g.Ready)+len(g.Endpoints))
	var zone *string
	if g.Zone != "" {
		zone = &g.Zone
	}
	for _, a := range g.Ready {
		out = append(out, discoveryv1.Endpoint{
			Addresses:  []string{a},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true), Serving: ptr.To(true), Terminating: ptr.To(false)},
			Zone:       clone(zone),
		})
	}
	for _, e := range g.Endpoints {
		out = append(out, discoveryv1.Endpoint{
			Addresses:  slices.Clone(e.Addresses),
			Conditions: *e.Conditions.DeepCopy(),
			Hostname:   clone(e.Hostname),
			Zone:       clone(zone),
		})
	}
	slices.SortStableFunc(out, func(a, b discoveryv1.Endpoint) int {
		return strings.Compare(first(a.Addresses), first(b.Addresses))
	})
	return out
}

// CountEndpoints counts the endpoints of groups, and of them the ready
// ones (an unset readiness counts as ready, as for EndpointSlices).
func CountEndpoints(groups []mcsv1alpha1.EndpointGroup) (ready, total int) {
	for i := range groups {
		g := &groups[i]
		ready += len(g.Ready)
		total += len(g.Ready) + len(g.Endpoints)
		for _, e := range g.Endpoints {
			if ptr.Deref(e.Conditions.Ready, true) {
				ready++
			}
		}
	}
	return ready, total
}

// HoldsAddress says whether an endpoint of groups has address addr.
func HoldsAddress(groups []mcsv1alpha1.EndpointGroup, addr string) bool {
	for i := range groups {
		if slices.Contains(groups[i].Ready, addr) {
			return true
		}
		for _, e := range groups[i].Endpoints {
			if slices.Contains(e.Addresses, addr) {
				return true
			}
		}
	}
	return false
}

func first(addrs []string) string {
	if len(addrs) == 0 {
		return ""
	}
	return addrs[0]
}

func clone[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
