package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/hub"
)

// tracker watches every ManifestWork and Policy of the hub through one
// informer each and remembers when each object was first seen and when it
// first reported what the scenarios wait for. The times are taken in the
// event handlers, so how often a scenario looks does not change a figure.
type tracker struct {
	mu sync.Mutex
	// seen and done map "namespace/name" to the first time the object was
	// seen, and the first time it was Applied (ManifestWork) or Compliant
	// (replicated Policy).
	seen, done map[string]time.Time
	// stamped maps a ManifestWork to its creationTimestamp and the
	// lastTransitionTime of its Applied condition: the hub's and the
	// agent's clocks (one machine), to one second, independent of how
	// late this process's watch delivers.
	stamped map[string][2]time.Time
	// roots holds, per root Policy "namespace/name", the clusters its
	// status lists with a compliance state, and when that count first
	// reached each value.
	roots map[string]map[int]time.Time
}

// startTracker runs the informers until ctx ends. Their caches keep no
// manifests, to keep the benchmark process small.
func startTracker(ctx context.Context, cfg *rest.Config) (*tracker, error) {
	t := &tracker{seen: map[string]time.Time{}, done: map[string]time.Time{}, stamped: map[string][2]time.Time{}, roots: map[string]map[int]time.Time{}}
	c, err := cache.New(cfg, cache.Options{
		Scheme: hub.Scheme(),
		ByObject: map[client.Object]cache.ByObject{
			&workv1.ManifestWork{}: {Transform: func(o any) (any, error) {
				if mw, ok := o.(*workv1.ManifestWork); ok {
					mw.Spec = workv1.ManifestWorkSpec{}
					mw.Status.ResourceStatus = workv1.ManifestResourceStatus{}
					mw.ManagedFields = nil
				}
				return o, nil
			}},
			&policyv1.Policy{}: {Transform: func(o any) (any, error) {
				if p, ok := o.(*policyv1.Policy); ok {
					p.Spec = policyv1.PolicySpec{}
					p.Status.Details = nil
					p.ManagedFields = nil
				}
				return o, nil
			}},
		},
	})
	if err != nil {
		return nil, err
	}
	for _, obj := range []client.Object{&workv1.ManifestWork{}, &policyv1.Policy{}} {
		inf, err := c.GetInformer(ctx, obj)
		if err != nil {
			return nil, err
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    t.observe,
			UpdateFunc: func(_, o any) { t.observe(o) },
		}); err != nil {
			return nil, err
		}
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("the benchmark's hub informers did not sync")
	}
	return t, nil
}

func (t *tracker) observe(o any) {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	switch obj := o.(type) {
	case *workv1.ManifestWork:
		key := obj.Namespace + "/" + obj.Name
		applied := meta.FindStatusCondition(obj.Status.Conditions, workv1.WorkApplied)
		done := applied != nil && applied.Status == metav1.ConditionTrue
		if _, ok := t.done[key]; !ok && done {
			t.stamped[key] = [2]time.Time{obj.CreationTimestamp.Time, applied.LastTransitionTime.Time}
		}
		t.mark(key, now, done)
	case *policyv1.Policy:
		key := obj.Namespace + "/" + obj.Name
		if obj.Labels[policyv1.RootPolicyLabel] != "" {
			t.mark(key, now, obj.Status.ComplianceState == policyv1.Compliant)
			return
		}
		reported := 0
		for _, s := range obj.Status.Status {
			if s.ComplianceState != "" {
				reported++
			}
		}
		if t.roots[key] == nil {
			t.roots[key] = map[int]time.Time{}
		}
		if _, ok := t.roots[key][reported]; !ok {
			t.roots[key][reported] = now
		}
	}
}

func (t *tracker) mark(key string, now time.Time, done bool) {
	if _, ok := t.seen[key]; !ok {
		t.seen[key] = now
	}
	if _, ok := t.done[key]; !ok && done {
		t.done[key] = now
	}
}

// times returns when each of keys was seen (or done), and how many are
// still missing.
func (t *tracker) times(keys []string, done bool) (at []time.Time, missing int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.seen
	if done {
		m = t.done
	}
	for _, k := range keys {
		if ts, ok := m[k]; ok {
			at = append(at, ts)
		} else {
			missing++
		}
	}
	return at, missing
}

// stamps returns, for each of keys that is done, its creation and
// Applied times as the objects themselves record them.
func (t *tracker) stamps(keys []string) [][2]time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out [][2]time.Time
	for _, k := range keys {
		if s, ok := t.stamped[k]; ok {
			out = append(out, s)
		}
	}
	return out
}

// waitAll waits until every one of keys is seen (or done) and returns the
// time the last one was.
func (t *tracker) waitAll(ctx context.Context, what string, keys []string, done bool, timeout time.Duration) (time.Time, error) {
	var last time.Time
	var missing int
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		var at []time.Time
		at, missing = t.times(keys, done)
		if missing > 0 {
			return false, nil
		}
		if len(at) == 0 { // nothing to wait for (e.g. -works-per-cluster 0)
			last = time.Now()
			return true, nil
		}
		last = slices.MaxFunc(at, func(a, b time.Time) int { return a.Compare(b) })
		return true, nil
	})
	if err != nil {
		return last, fmt.Errorf("%d of %d %s missing after %s: %w", missing, len(keys), what, timeout, err)
	}
	return last, nil
}

// waitRoot waits until root's status lists n clusters with a compliance
// state and returns when it first did.
func (t *tracker) waitRoot(ctx context.Context, root string, n int, timeout time.Duration) (time.Time, error) {
	var at time.Time
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		t.mu.Lock()
		defer t.mu.Unlock()
		ts, ok := t.roots[root][n]
		at = ts
		return ok, nil
	})
	if err != nil {
		return at, fmt.Errorf("the status of root policy %s does not list %d clusters after %s: %w", root, n, timeout, err)
	}
	return at, nil
}

// keysIn returns "cluster/name" for every cluster.
func keysIn(clusters []string, name string) []string {
	keys := make([]string, len(clusters))
	for i, c := range clusters {
		keys[i] = c + "/" + name
	}
	return keys
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat times: 100 on every
// Linux architecture Go supports.
const clockTicks = 100

// cpuTime returns the CPU time (user + system) a process has used.
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name may hold spaces; the fields after it do not.
	i := bytes.LastIndexByte(b, ')')
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	var ticks int64
	for _, f := range fields[11:13] { // utime and stime, fields 14 and 15
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// countedResources are the hub objects whose numbers scenario (b) prints.
var countedResources = []schema.GroupVersionResource{
	{Group: "cluster.open-cluster-management.io", Version: "v1", Resource: "managedclusters"},
	{Group: "work.open-cluster-management.io", Version: "v1", Resource: "manifestworks"},
	{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"},
	{Version: "v1", Resource: "namespaces"},
	{Version: "v1", Resource: "secrets"},
	{Version: "v1", Resource: "serviceaccounts"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"},
	{Group: "certificates.k8s.io", Version: "v1", Resource: "certificatesigningrequests"},
	{Version: "v1", Resource: "events"},
}

// countObjects counts the hub's objects of each of countedResources: a
// list of one item says how many remain.
func countObjects(ctx context.Context, cfg *rest.Config) ([]int64, error) {
	c, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	counts := make([]int64, len(countedResources))
	for i, gvr := range countedResources {
		list, err := c.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			return nil, fmt.Errorf("count %s: %w", gvr.Resource, err)
		}
		counts[i] = int64(len(list.Items))
		if list.RemainingItemCount != nil {
			counts[i] += *list.RemainingItemCount
		}
	}
	return counts, nil
}
