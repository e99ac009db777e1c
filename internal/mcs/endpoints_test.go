package mcs

import (
	"slices"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/utils/ptr"

	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
)

func TestReadyAddress(t *testing.T) {
	yes, no := ptr.To(true), ptr.To(false)
	for _, tc := range []struct {
		name string
		e    discoveryv1.Endpoint
		ok   bool
	}{
		{"ready", discoveryv1.Endpoint{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: yes, Serving: yes, Terminating: no}}, true},
		{"unset", discoveryv1.Endpoint{Addresses: []string{"10.0.0.1"}}, true},
		{"not ready", discoveryv1.Endpoint{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: no}}, false},
		{"not serving", discoveryv1.Endpoint{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Serving: no}}, false},
		{"terminating", discoveryv1.Endpoint{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Terminating: yes}}, false},
		{"hostname", discoveryv1.Endpoint{Addresses: []string{"10.0.0.1"}, Hostname: ptr.To("web-0")}, false},
		{"two addresses", discoveryv1.Endpoint{Addresses: []string{"10.0.0.1", "10.0.0.2"}}, false},
		{"no address", discoveryv1.Endpoint{}, false},
	} {
		addr, ok := ReadyAddress(&tc.e)
		if ok != tc.ok || (ok && addr != "10.0.0.1") {
			t.Errorf("%s: ReadyAddress = %q, %t; want ok %t", tc.name, addr, ok, tc.ok)
		}
	}
}

func TestEndpoints(t *testing.T) {
	g := &mcsv1alpha1.EndpointGroup{Zone: "z", Ready: []string{"10.0.0.3", "10.0.0.1"}, Endpoints: []mcsv1alpha1.Endpoint{
		{Addresses: []string{"10.0.0.2"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(false)}, Hostname: ptr.To("web-1")},
	}}
	got := Endpoints(g)
	var addrs []string
	for _, e := range got {
		addrs = append(addrs, e.Addresses[0])
		if ptr.Deref(e.Zone, "") != "z" {
			t.Errorf("%s: zone %v, want the group's", e.Addresses[0], e.Zone)
		}
	}
	if !slices.Equal(addrs, []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"}) {
		t.Errorf("addresses %v, want in address order", addrs)
	}
	if c := got[0].Conditions; !*c.Ready || !*c.Serving || *c.Terminating {
		t.Errorf("a ready-list endpoint: %+v, want ready, serving, not terminating", c)
	}
	if e := got[1]; *e.Conditions.Ready || e.Conditions.Serving != nil || *e.Hostname != "web-1" {
		t.Errorf("an endpoint in full: %+v, want it as the group has it", e)
	}
	// Nothing is shared with the group.
	*got[0].Zone = "other"
	*got[1].Hostname = "other"
	if g.Zone != "z" || *g.Endpoints[0].Hostname != "web-1" {
		t.Error("Endpoints shares memory with the group")
	}
	if z := Endpoints(&mcsv1alpha1.EndpointGroup{Ready: []string{"10.0.0.1"}})[0].Zone; z != nil {
		t.Errorf("a group without zone gives zone %q", *z)
	}
}

func TestCountAndHold(t *testing.T) {
	groups := []mcsv1alpha1.EndpointGroup{
		{Ready: []string{"10.0.0.1", "10.0.0.2"}},
		{Endpoints: []mcsv1alpha1.Endpoint{
			{Addresses: []string{"10.0.0.3"}},
			{Addresses: []string{"10.0.0.4", "10.0.0.5"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(false)}},
		}},
	}
	if ready, total := CountEndpoints(groups); ready != 3 || total != 4 {
		t.Errorf("CountEndpoints = %d, %d; want 3 ready (an unset readiness counts) of 4", ready, total)
	}
	for _, a := range []string{"10.0.0.2", "10.0.0.3", "10.0.0.5"} {
		if !HoldsAddress(groups, a) {
			t.Errorf("HoldsAddress(%s) = false", a)
		}
	}
	if HoldsAddress(groups, "10.0.0.6") {
		t.Error("HoldsAddress of an address no endpoint has")
	}
}
