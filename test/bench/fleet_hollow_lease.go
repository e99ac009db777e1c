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

// hollowLeaseWorkers is how many Lease renewals the hollow agents make at
// once: renewals are due a lease period apart per cluster, spread over
// the period, so a few suffice for 10,000 clusters.
const hollowLeaseWorkers = 8

// hollowLease renews one hollow agent's Lease every lease period with
// the requests the agent makes. Between renewals it is only a runtime
// timer, no goroutine: the runtime's timer heap is the schedule of all
// the agents' renewals.
type hollowLease struct {
	a *hollowAgent
	// slots bounds the renewals under way, shared by all agents.
	slots chan struct{}

	mu      sync.Mutex
	timer   *time.Timer
	stopped bool
	// last is the Lease last written, without its managed fields: the
	// next renewal updates it.
	last     *coordinationv1.Lease
	failures int
}

// start renews the lease now and then every period until stop.
func (l *hollowLease) start(ctx context.Context) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.timer = time.AfterFunc(0, func() { l.renew(ctx) })
}

// stop ends the renewals and waits for one under way.
func (l *hollowLease) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped = true
	if l.timer != nil {
		l.timer.Stop()
	}
}

func (l *hollowLease) renew(ctx context.Context) {
	l.slots <- struct{}{}
	defer func() { <-l.slots }()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped || ctx.Err() != nil {
		return
	}
	period := time.Duration(l.a.leaseSeconds.Load()) * time.Second
	if period <= 0 {
		period = clusterv1.DefaultLeaseDurationSeconds * time.Second
	}
	next := period
	lease, err := l.renewOnce(ctx, period)
	if err != nil {
		// The next renewal reads the lease first.
		lease = nil
		if ctx.Err() != nil {
			return
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
	l.timer.Reset(next)
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
