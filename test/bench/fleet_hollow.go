package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/flotilla-io/flotilla/agent/policy/engine"
	"github.com/flotilla-io/flotilla/agent/registration"
	"github.com/flotilla-io/flotilla/agent/work"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

var fleetModes = flag.String("fleet-mode", "real,hollow", "fleet: how each simulated cluster runs: real (the agent's code, applying into a shared spoke) "+
	"or hollow (only what the hub sees: its own key, CSR, certificate and connection, lease, ManagedCluster status, "+
	"watches of its ManifestWorks and Policies and their status, computed without a spoke); both, one fleet after the other, by default")

// fleetMode is the mode of the fleet that runs now: one of -fleet-mode's.
var fleetMode = new(string)

// hollow says whether the fleet's clusters are hollow agents.
func hollow() bool { return *fleetMode == "hollow" }

func checkFleetMode() error {
	for m := range strings.SplitSeq(*fleetModes, ",") {
		if m != "real" && m != "hollow" {
			return fmt.Errorf("-fleet-mode %q: want real, hollow or both (real,hollow)", *fleetModes)
		}
	}
	return nil
}

// hollowShared is what the hollow agents share, as the agents of one
// process would: how to reach the hub (its address, its CA, the
// bootstrap token), the kinds a managed cluster serves, the work status
// simulator, the Kubernetes version every simulated cluster reports, and
// the slots for lease renewals.
type hollowShared struct {
	host  string
	tls   *tls.Config
	token string
	kinds *engine.ObjectSet
	works *work.Simulator
	// version is what every simulated cluster reports.
	version    string
	leaseSlots chan struct{}
	workers    hollowWorkers
	// hooks add to what every agent does (the services benchmark's).
	hooks hollowHooks
	// agents counts the agents' goroutines, to wait for when they stop.
	agents sync.WaitGroup
	// errors counts the hub requests that failed, by what; first keeps
	// the first error of each, to print.
	mu     sync.Mutex
	errors map[string]int
	first  map[string]string
}

// kindMapper resolves kinds with the ObjectSet's kinds: the built-in and
// OCM kinds, as a managed cluster serves them. Only RESTMapping is used.
type kindMapper struct {
	meta.RESTMapper
	kinds *engine.ObjectSet
}

func (m kindMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	v := ""
	if len(versions) > 0 {
		v = versions[0]
	}
	return m.kinds.Mapping(gk.WithVersion(v))
}

// startHollowAgents runs one hollow agent per name in this process, each
// with its own key, CSR and client certificate and its own HTTP/2
// connection to the hub. admin reads the hub's version once for all.
// The returned function stops them all, waits until they have, and
// prints the hub requests that failed.
func startHollowAgents(ctx context.Context, names []string, bootstrap string, admin *rest.Config) (stop func(), err error) {
	return startHollowAgentsWith(ctx, names, bootstrap, admin, hollowHooks{})
}

// hollowWatch is a watch of a hollow agent: what it watches (for errors),
// its path and query, and the handler of its objects.
type hollowWatch struct {
	what, path string
	query      url.Values
	handle     hollowHandler
}

// hollowHooks extend what each hollow agent does, for scenarios beyond
// the fleet's: watches more than the fleet's three, and a call once the
// agent holds its certificate and its cluster is accepted (from then on
// a.hub is its connection). Either may be nil.
type hollowHooks struct {
	watches func(a *hollowAgent) []hollowWatch
	joined  func(ctx context.Context, a *hollowAgent)
}

// startHollowAgentsWith is startHollowAgents with hooks.
func startHollowAgentsWith(ctx context.Context, names []string, bootstrap string, admin *rest.Config, hooks hollowHooks) (stop func(), err error) {
	sh := &hollowShared{errors: map[string]int{}, first: map[string]string{}, leaseSlots: make(chan struct{}, hollowLeaseWorkers), hooks: hooks}
	boot, err := clientcmd.BuildConfigFromFlags("", bootstrap)
	if err != nil {
		return nil, err
	}
	sh.host, sh.token = strings.TrimSuffix(boot.Host, "/"), boot.BearerToken
	if sh.token == "" && boot.BearerTokenFile != "" {
		b, err := os.ReadFile(boot.BearerTokenFile)
		if err != nil {
			return nil, fmt.Errorf("read the bootstrap token: %w", err)
		}
		sh.token = strings.TrimSpace(string(b))
	}
	if sh.tls, err = rest.TLSConfigFor(boot); err != nil || sh.tls == nil {
		return nil, fmt.Errorf("the bootstrap kubeconfig %s has no TLS configuration for the hub: %v", bootstrap, err)
	}
	// Every simulated cluster is an API server of the hub's build, as the
	// shared spokes of the real mode are.
	dc, err := discovery.NewDiscoveryClientForConfig(admin)
	if err != nil {
		return nil, err
	}
	v, err := dc.ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("read the hub's version: %w", err)
	}
	sh.version = v.GitVersion
	sh.kinds = engine.NewObjectSet(nil)
	sh.works = work.NewSimulator(kindMapper{kinds: sh.kinds})

	sh.workers = startHollowWorkers(hollowWorkerCount)
	agentCtx, cancel := context.WithCancel(ctx)
	for _, name := range names {
		a := &hollowAgent{sh: sh, name: name, id: utilrand.String(10), clusterID: string(uuid.NewUUID()),
			reported: map[string]int64{}, evaluated: map[string]int64{}, objects: map[string]*unstructured.Unstructured{}}
		a.lease = hollowLease{a: a, slots: sh.leaseSlots}
		sh.agents.Go(func() { a.run(agentCtx) })
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			sh.agents.Wait()
			close(sh.workers)
			sh.printErrors()
		})
	}, nil
}

// failed counts a failed hub request of what.
func (sh *hollowShared) failed(what string, err error) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.errors[what]++; sh.errors[what] == 1 {
		sh.first[what] = err.Error()
	}
}

func (sh *hollowShared) printErrors() {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	for what, n := range sh.errors {
		fmt.Printf("      hollow agents: %d failed requests to %s (retried; first: %s)\n", n, what, sh.first[what])
	}
}

// hollowWorkerCount is how many goroutines handle the events of all the
// hollow agents' watches. Handling an event is mostly waiting for the
// hub's answer to a write; 32 write faster than the hub can take them.
const hollowWorkerCount = 32

// hollowAgent is one simulated cluster as the hub sees it. Once joined it
// is three goroutines, one per watch, that only read their watch, and its
// connection's (the HTTP/2 read loop, and one per open stream): its lease
// is renewed and its ManagedCluster's status checked from timers, and its
// watches' events are handled on the shared workers.
type hollowAgent struct {
	sh                  *hollowShared
	name, id, clusterID string
	hub                 *hollowClient
	lease               hollowLease
	status              hollowStatus
	leaseSeconds        atomic.Int32
	// cluster is the ManagedCluster as its watch last saw it, without
	// managed fields; nil before the watch saw it.
	cluster atomic.Pointer[clusterv1.ManagedCluster]
	// reported maps a ManifestWork to the generation whose status it
	// wrote; evaluated, a Policy to the generation it evaluated. Each is
	// touched by its watch's goroutine only.
	reported, evaluated map[string]int64
	// objects are what enforced policies created on the simulated
	// cluster, by "resource/namespace/name": all it holds.
	objects map[string]*unstructured.Unstructured
	// watching counts the agent's watches still going; the last to end
	// stops the timers and closes the connection.
	watching atomic.Int32
}

// run joins and starts the agent's lease and watches, each watch on a
// goroutine of its own, and returns: the goroutine that joined, with the
// deep stack of the TLS handshake and the key generation, ends.
func (a *hollowAgent) run(ctx context.Context) {
	cert, err := a.join(ctx)
	if err != nil {
		return
	}
	a.hub = newHollowClient(a.sh.host, a.sh.tls, cert, "")
	if err := a.waitAccepted(ctx); err != nil {
		a.hub.close()
		return
	}
	a.lease.start(ctx, a.lease.renew)
	// The status checks start when the watch of the ManagedCluster first
	// sees it (onCluster), as the agent's status controller does.
	watches := []hollowWatch{
		{"managedclusters", hubPath(clusterv1.GroupVersion, "", "managedclusters", "", ""),
			url.Values{"fieldSelector": {"metadata.name=" + a.name}}, a.onCluster},
		{"manifestworks", hubPath(workv1.GroupVersion, a.name, "manifestworks", "", ""), nil, a.onWork},
		{"policies", hubPath(policyv1.GroupVersion, a.name, "policies", "", ""), nil, a.onPolicy},
	}
	if a.sh.hooks.watches != nil {
		watches = append(watches, a.sh.hooks.watches(a)...)
	}
	if a.sh.hooks.joined != nil {
		a.sh.hooks.joined(ctx, a)
	}
	a.watching.Store(int32(len(watches)))
	for _, w := range watches {
		a.sh.agents.Go(func() {
			defer func() {
				if a.watching.Add(-1) == 0 {
					a.lease.stop()
					a.status.stop()
					a.hub.close()
				}
			}()
			a.follow(ctx, w.what, w.path, w.query, w.handle)
		})
	}
}

// leasePeriod is the ManagedCluster's spec.leaseDurationSeconds as last
// read, as the agent's.
func (a *hollowAgent) leasePeriod() time.Duration {
	if s := a.leaseSeconds.Load(); s > 0 {
		return time.Duration(s) * time.Second
	}
	return clusterv1.DefaultLeaseDurationSeconds * time.Second
}

// retry waits before the attempt after attempt n, up to 10 s; false when
// ctx ended.
func retry(ctx context.Context, n int) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(min(10*time.Second, 100*time.Millisecond<<min(n, 7))):
		return true
	}
}

// waitAccepted reads the ManagedCluster with the agent's certificate
// until the hub lets it, as the agent does once it holds one, and as
// often.
func (a *hollowAgent) waitAccepted(ctx context.Context) error {
	path := hubPath(clusterv1.GroupVersion, "", "managedclusters", a.name, "")
	backoff := registration.AcceptedPollBackoff()
	for {
		err := a.hub.get(ctx, path, nil, &hollowObject{})
		if err == nil || apierrors.IsNotFound(err) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff.Step()):
		}
	}
}
