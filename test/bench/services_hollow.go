package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/watch"

	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/mcs"
)

// hollowServices is the multi-cluster services side of the hollow
// clusters: each, with its own identity and connection, writes its
// ExportedServices in its namespace on the hub as the agent's export side
// does, and watches its set's ImportedServices as the agent's import side
// does (it writes nothing into a cluster: it has none).
type hollowServices struct {
	l     *servicesLayout
	set   string
	board *probeBoard

	mu sync.Mutex
	// agents are the joined hollow agents by cluster name.
	agents map[string]*hollowAgent
	// complete[cluster][j] says that the cluster's watch saw service j's
	// ImportedService with every exporter's endpoints.
	complete map[string][]bool
	// completed counts the true entries of complete.
	completed atomic.Int64
}

func newHollowServices(l *servicesLayout, set string, board *probeBoard) *hollowServices {
	s := &hollowServices{l: l, set: set, board: board, agents: map[string]*hollowAgent{}, complete: map[string][]bool{}}
	for _, n := range l.clusters[l.real:] {
		s.complete[n] = make([]bool, l.services)
	}
	return s
}

// hooks are what the hollow agents run for multi-cluster services.
func (s *hollowServices) hooks() hollowHooks {
	return hollowHooks{
		watches: func(a *hollowAgent) []hollowWatch {
			path := hubPath(mcsv1alpha1.GroupVersion, mcs.SetNamespace(s.set), "importedservices", "", "")
			return []hollowWatch{{"importedservices", path, nil, func(ctx context.Context, ev watch.EventType, m *hollowMeta, raw json.RawMessage) {
				s.onImported(a.name, ev, m, raw)
			}}}
		},
		joined: func(_ context.Context, a *hollowAgent) {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.agents[a.name] = a
		},
	}
}

// onImported is a hollow cluster's watch seeing an ImportedService of its
// set: it marks the probe under way if the object holds its address, and
// the service complete for the cluster once it holds every endpoint.
func (s *hollowServices) onImported(cluster string, ev watch.EventType, m *hollowMeta, raw json.RawMessage) {
	now := time.Now()
	if ev == watch.Deleted {
		return
	}
	j := s.l.serviceOf(m.Name)
	if j < 0 {
		return
	}
	p := s.board.current(m.Name)
	s.mu.Lock()
	done := s.complete[cluster]
	needed := done != nil && !done[j]
	s.mu.Unlock()
	if p == nil && !needed {
		return
	}
	var is mcsv1alpha1.ImportedService
	if err := json.Unmarshal(raw, &is); err != nil {
		return
	}
	if p != nil && clusterHolds(&is.Spec, p.origin, p.addr) {
		s.board.seen(p, cluster, now)
	}
	if needed && importComplete(&is.Spec, s.l.exporter, s.l.endpoints) {
		s.mu.Lock()
		if !done[j] {
			done[j] = true
			s.completed.Add(1)
		}
		s.mu.Unlock()
	}
}

// waitJoined waits until every hollow agent holds its certificate.
func (s *hollowServices) waitJoined(ctx context.Context, timeout time.Duration) error {
	want := len(s.l.clusters) - s.l.real
	return waitUntil(ctx, timeout, func() (bool, string) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.agents) == want, fmt.Sprintf("%d of %d hollow agents joined", len(s.agents), want)
	})
}

// agent is the hollow agent of cluster c.
func (s *hollowServices) agent(c int) *hollowAgent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.agents[s.l.clusters[c]]
}

// exportAll writes every hollow cluster's ExportedServices, 16 at a time.
func (s *hollowServices) exportAll(ctx context.Context) (int, error) {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	var n atomic.Int64
	for c := s.l.real; c < len(s.l.clusters); c++ {
		a := s.agent(c)
		for _, j := range s.l.exportsOf(c) {
			g.Go(func() error {
				es := s.l.exportedService(c, j)
				path := hubPath(mcsv1alpha1.GroupVersion, es.Namespace, "exportedservices", "", "")
				var err error
				for attempt := 0; ; attempt++ {
					if err = a.hub.create(gctx, path, es, nil); err == nil || apierrors.IsAlreadyExists(err) {
						n.Add(1)
						return nil
					}
					// Refused until the hub grants the cluster its
					// ExportedServices, or the hub's flow control.
					if attempt == 20 || !retry(gctx, attempt) {
						return fmt.Errorf("hollow cluster %s: create ExportedService %s/%s: %w", es.Namespace, es.Namespace, es.Name, err)
					}
				}
			})
		}
	}
	err := g.Wait()
	return int(n.Load()), err
}

// change gives the first endpoint of hollow cluster c's export of service
// j address addr: one merge patch of the spec's endpoints, as the agent
// writes an endpoint change.
func (s *hollowServices) change(ctx context.Context, c, j int, addr string) error {
	a := s.agent(c)
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"endpoints": s.l.endpointGroups(c, j, addr)}})
	if err != nil {
		return err
	}
	path := hubPath(mcsv1alpha1.GroupVersion, s.l.clusters[c], "exportedservices", s.l.object(j), "")
	return a.hub.mergePatch(ctx, path, patch, nil)
}

// waitUntil polls ok every 250 ms until it holds, ctx ends or timeout
// passes; the error then says what ok said last.
func waitUntil(ctx context.Context, timeout time.Duration, ok func() (bool, string)) error {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		done, state := ok()
		if done {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not done after %s: %s", timeout, state)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %s", ctx.Err(), state)
		case <-tick.C:
		}
	}
}
