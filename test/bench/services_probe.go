package main

import (
	"fmt"
	"slices"
	"sync"
	"time"

	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/mcs"
)

// serviceProbe is one endpoint change the services benchmark follows:
// in cluster origin, the first endpoint of service object (<ns>.<name>)
// took address addr at start. The times are taken in the watches' event
// handlers, before an event is decoded.
type serviceProbe struct {
	object, origin, addr string
	start                time.Time
	// exported and imported are when the hub's ExportedService of the
	// origin, and the set's ImportedService, first held addr (the
	// benchmark's own watches of the hub): the first two hops.
	exported, imported time.Time
	// seen maps each importing cluster to when it first held addr: its
	// EndpointSlice (a real spoke) or its agent's ImportedService (a
	// hollow cluster).
	seen map[string]time.Time
	done chan struct{}
}

// probeBoard holds the probe under way, one at a time, for the watches
// to mark.
type probeBoard struct {
	mu  sync.Mutex
	cur *serviceProbe
	// importers are the clusters every probe waits for.
	importers map[string]bool
}

func newProbeBoard(importers []string) *probeBoard {
	b := &probeBoard{importers: map[string]bool{}}
	for _, n := range importers {
		b.importers[n] = true
	}
	return b
}

// begin makes p the probe under way.
func (b *probeBoard) begin(p *serviceProbe) {
	p.seen = map[string]time.Time{}
	p.done = make(chan struct{})
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cur = p
}

// end ends the probe under way; marks after it are dropped.
func (b *probeBoard) end() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cur = nil
}

// current returns the probe under way if it is about object, else nil:
// a watch decodes an event only when it is.
func (b *probeBoard) current(object string) *serviceProbe {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cur != nil && b.cur.object == object {
		return b.cur
	}
	return nil
}

// seen marks that importer held p's address at t, the first time only.
func (b *probeBoard) seen(p *serviceProbe, importer string, t time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cur != p || !b.importers[importer] {
		return
	}
	if _, ok := p.seen[importer]; ok {
		return
	}
	p.seen[importer] = t
	if len(p.seen) == len(b.importers) {
		close(p.done)
	}
}

// hop marks the hub's ExportedService (imported false) or ImportedService
// (imported true) holding p's address at t, the first time only.
func (b *probeBoard) hop(p *serviceProbe, imported bool, t time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	at := &p.exported
	if imported {
		at = &p.imported
	}
	if b.cur == p && at.IsZero() {
		*at = t
	}
}

// missing lists the importers that have not seen p, sorted.
func (b *probeBoard) missing(p *serviceProbe) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for n := range b.importers {
		if _, ok := p.seen[n]; !ok {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// last is when the last of the importers for which in says true saw p,
// after p.start; false when none did.
func (p *serviceProbe) last(in func(string) bool) (time.Duration, bool) {
	var d time.Duration
	found := false
	for n, t := range p.seen {
		if in(n) {
			d, found = max(d, t.Sub(p.start)), true
		}
	}
	return d, found
}

// groupsHold says whether endpoint groups hold an endpoint with addr.
func groupsHold(groups []mcsv1alpha1.EndpointGroup, addr string) bool {
	return mcs.HoldsAddress(groups, addr)
}

// clusterHolds says whether an ImportedService lists cluster with an
// endpoint of addr.
func clusterHolds(spec *mcsv1alpha1.ImportedServiceSpec, cluster, addr string) bool {
	for _, c := range spec.Clusters {
		if c.Name == cluster {
			return groupsHold(c.Endpoints, addr)
		}
	}
	return false
}

// importComplete says whether an ImportedService lists exporters
// clusters, each available with endpoints endpoints: what an importer
// holds once the initial export has reached it.
func importComplete(spec *mcsv1alpha1.ImportedServiceSpec, exporters, endpoints int) bool {
	if len(spec.Clusters) != exporters {
		return false
	}
	for _, c := range spec.Clusters {
		if _, n := mcs.CountEndpoints(c.Endpoints); !c.Available || n != endpoints {
			return false
		}
	}
	return true
}

// endpointAddr is the IPv4 address of number n (up to 2^24): 10.x.y.z,
// or, for the changes, 11.x.y.z.
func endpointAddr(first byte, n int) string {
	return fmt.Sprintf("%d.%d.%d.%d", first, (n>>16)&255, (n>>8)&255, n&255)
}
