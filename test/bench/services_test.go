package main

import (
	"testing"
	"time"

	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/mcs"
)

func TestServicesLayout(t *testing.T) {
	names := clusterNames("member", 10)
	l, err := newServicesLayout(names, 2, 25, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	exports := 0
	addrs := map[string]bool{}
	for c := range names {
		for _, j := range l.exportsOf(c) {
			exports++
			for _, g := range l.endpointGroups(c, j, "") {
				for _, e := range mcs.Endpoints(&g) {
					if addrs[e.Addresses[0]] {
						t.Fatalf("address %s given twice", e.Addresses[0])
					}
					addrs[e.Addresses[0]] = true
				}
			}
		}
	}
	if exports != 25*2 {
		t.Errorf("%d exports, want 50 (25 services from 2 clusters each)", exports)
	}
	for j := range 25 {
		if ex := l.exportersOf(j); ex[0] == ex[1] {
			t.Errorf("service %d exported twice by cluster %d", j, ex[0])
		}
		if got := l.serviceOf(l.object(j)); got != j {
			t.Errorf("serviceOf(%s) = %d, want %d", l.object(j), got, j)
		}
	}
	if !l.isReal(names[1]) || l.isReal(names[2]) {
		t.Error("the first two clusters, and only they, are real")
	}
	es := l.exportedService(3, l.exportsOf(3)[0])
	if es.Namespace != names[3] || es.Name != es.Spec.Namespace+"."+es.Spec.Name {
		t.Errorf("ExportedService %s/%s: want namespace %s and name <ns>.<svc>", es.Namespace, es.Name, names[3])
	}
	for _, bad := range [][5]int{{0, 0, 1, 1, 1}, {3, 4, 1, 1, 1}, {3, 0, 1, 101, 1}, {3, 0, 1, 1, 4}} {
		if _, err := newServicesLayout(clusterNames("m", bad[0]), bad[1], bad[2], bad[3], bad[4]); err == nil {
			t.Errorf("newServicesLayout(%v) took a layout it cannot make", bad)
		}
	}
}

func TestProbeBoard(t *testing.T) {
	b := newProbeBoard([]string{"a", "b"})
	p := &serviceProbe{object: "ns.svc", origin: "a", addr: "11.0.0.1", start: time.Now()}
	b.begin(p)
	if b.current("ns.other") != nil || b.current("ns.svc") != p {
		t.Fatal("current returns the probe of its object only")
	}
	b.seen(p, "a", p.start.Add(time.Second))
	b.seen(p, "a", p.start.Add(3*time.Second))
	b.seen(p, "stranger", p.start.Add(time.Second))
	if got := b.missing(p); len(got) != 1 || got[0] != "b" {
		t.Errorf("missing = %v, want [b]", got)
	}
	select {
	case <-p.done:
		t.Fatal("done before every importer saw it")
	default:
	}
	b.seen(p, "b", p.start.Add(2*time.Second))
	<-p.done
	if d, _ := p.last(func(string) bool { return true }); d != 2*time.Second {
		t.Errorf("last = %s, want 2s (the first mark of each importer counts)", d)
	}
	b.end()
	b.hop(p, true, time.Now())
	if !p.imported.IsZero() {
		t.Error("a mark after the probe ended counted")
	}
}

func TestImportHolds(t *testing.T) {
	l, err := newServicesLayout(clusterNames("member", 4), 0, 4, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	spec := &mcsv1alpha1.ImportedServiceSpec{Clusters: []mcsv1alpha1.ImportedCluster{
		{Name: "member-0001", Available: true, Endpoints: l.endpointGroups(1, 1, "11.0.0.7")}}}
	if !clusterHolds(spec, "member-0001", "11.0.0.7") || clusterHolds(spec, "member-0002", "11.0.0.7") || clusterHolds(spec, "member-0001", "11.0.0.8") {
		t.Error("clusterHolds looks at the named cluster's addresses only")
	}
	if !importComplete(spec, 1, 3) || importComplete(spec, 2, 3) || importComplete(spec, 1, 4) {
		t.Error("importComplete wants every exporter with all its endpoints")
	}
	spec.Clusters[0].Available = false
	if importComplete(spec, 1, 3) {
		t.Error("an unavailable exporter's import is not complete")
	}
}

func TestIsWrite(t *testing.T) {
	for k, want := range map[string]bool{"PUT exportedservices": true, "PATCH exportedservices/status": true, "POST importedservices": true,
		"WATCH importedservices": false, "LIST exportedservices": false, "GET importedservices": false} {
		if isWrite(k) != want {
			t.Errorf("isWrite(%q) = %t", k, !want)
		}
	}
}
