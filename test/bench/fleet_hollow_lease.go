package main

import (
	"context"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
)

// hollowLeaseWorkers bounds the Lease renewals the hollow agents have
// under way at once. A real agent renews its own lease whatever the
// hub's latency, so the bound only caps the simulator's goroutines: the
// renewals under way are those due a second (N per lease period) times
// the hub's latency, about 45 at 10,000 clusters and 265 ms. A bound of 8
// capped renewals at about 25 a second against the 167 due at 10,000
// while works were created: hundreds of clusters went Unknown and were
// tainted unreachable, which a real fleet's leases would not have caused.
const hollowLeaseWorkers = 1024

// hollowTimer runs a hollow agent's periodic request (its lease renewal,
// its status check) now and then again after the pause the run returns,
// until stop. Between runs it is only a runtime timer, no goroutine: the
// runtime's timer heap is the schedule of all the agents' requests.
type hollowTimer struct {
	mu      sync.Mutex
	timer   *time.Timer
	stopped bool
}

// start runs run now and then after each pause it returns; it does
// nothing when the runs were started before, or stopped.
func (t *hollowTimer) start(ctx context.Context, run func(context.Context) time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.timer != nil || t.stopped {
		return
	}
	t.timer = time.AfterFunc(0, func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.stopped || ctx.Err() != nil {
			return
		}
		t.timer.Reset(run(ctx))
	})
}

// stop ends the runs and waits for one under way.
func (t *hollowTimer) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopped = true
	if t.timer != nil {
		t.timer.Stop()
	}
}

// hollowLease renews one hollow agent's Lease every lease period with
// the requests the agent makes.
type hollowLease struct {
	hollowTimer
	a *hollowAgent
	// slots bounds the renewals under way, shared by all agents.
	slots chan struct{}
	// last is the Lease last written, without its managed fields: the
	// next renewal updates it.
	last     *coordinationv1.Lease
	failures int
}

// renew renews the lease and returns when to renew it again.
func (l *hollowLease) renew(ctx context.Context) time.Duration {
	l.slots <- struct{}{}
	defer func() { <-l.slots }()
	period := l.a.leasePeriod()
	next := period
	lease, err := l.renewOnce(ctx, period)
	if err != nil {
		// The next renewal reads the lease first.
		lease = nil
		if ctx.Err() != nil {
			return period
		}
		// As the agent: back off, up to the period, while the hub
		// refuses (its RBAC for the cluster may not exist yet).
		l.a.sh.failed("leases", err)
		next = min(period, 100*time.Millisecond<<min(l.failures, 10))
		l.failures++
	} else {
		l.failures = 0
	}
	if lease != nil {
		lease.ManagedFields = nil
	}
	l.last = lease
	return next
}

// renewOnce updates the lease last written; reads it only when that
// conflicts, and creates it when there is none.
func (l *hollowLease) renewOnce(ctx context.Context, period time.Duration) (*coordinationv1.Lease, error) {
	hub, ns := l.a.hub, l.a.name
	now := metav1.NowMicro()
	path := hubPath(coordinationv1.SchemeGroupVersion, ns, "leases", clusterv1.ManagedClusterLeaseName, "")
	lease := &coordinationv1.Lease{}
	if l.last != nil {
		l.last.Spec.RenewTime = &now
		err := hub.update(ctx, path, l.last, lease)
		if err == nil || (!apierrors.IsConflict(err) && !apierrors.IsNotFound(err)) {
			return lease, err
		}
		lease = &coordinationv1.Lease{}
	}
	err := hub.get(ctx, path, nil, lease)
	if apierrors.IsNotFound(err) {
		created := &coordinationv1.Lease{}
		err := hub.create(ctx, hubPath(coordinationv1.SchemeGroupVersion, ns, "leases", "", ""), &coordinationv1.Lease{
			TypeMeta:   metav1.TypeMeta{APIVersion: coordinationv1.SchemeGroupVersion.String(), Kind: "Lease"},
			ObjectMeta: metav1.ObjectMeta{Name: clusterv1.ManagedClusterLeaseName, Namespace: ns},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity:       ptr.To(ns),
				LeaseDurationSeconds: ptr.To(int32(period / time.Second)),
				RenewTime:            &now,
			},
		}, created)
		return created, err
	}
	if err != nil {
		return nil, err
	}
	lease.Spec.RenewTime = &now
	updated := &coordinationv1.Lease{}
	err = hub.update(ctx, path, lease, updated)
	return updated, err
}
