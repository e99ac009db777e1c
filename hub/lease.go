package hub

import (
	"fmt"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Lease times the election of the hub process that runs the controllers
// (the Lease open-cluster-management-hub/flotilla-hub), as client-go's
// leader election does.
type Lease struct {
	// Duration is how long a standby waits, after it last saw the lease
	// renewed, before it takes the lease of a leader that has stopped
	// renewing it (a crashed one).
	Duration time.Duration
	// RenewDeadline is how long the leader keeps trying to renew before it
	// gives up leading, and with it the process stops.
	RenewDeadline time.Duration
	// RetryPeriod is how often a standby tries to take the lease, and the
	// leader to renew it.
	RetryPeriod time.Duration
}

// DefaultLease is the hub's election timing. A leader that cannot renew in
// time stops, and with it the hub process: on a loaded machine (a 2-core hub
// accepting a thousand clusters) client-go's 10 s renew deadline was missed.
// A standby takes over a released lease (the leader stopped cleanly) within
// about one RetryPeriod, a crashed leader's within about Duration plus two
// RetryPeriods (see docs/ha.md).
var DefaultLease = Lease{Duration: 60 * time.Second, RenewDeadline: 45 * time.Second, RetryPeriod: 10 * time.Second}

// complete fills in the zero fields from DefaultLease.
func (l Lease) complete() Lease {
	if l.Duration == 0 {
		l.Duration = DefaultLease.Duration
	}
	if l.RenewDeadline == 0 {
		l.RenewDeadline = DefaultLease.RenewDeadline
	}
	if l.RetryPeriod == 0 {
		l.RetryPeriod = DefaultLease.RetryPeriod
	}
	return l
}

// Validate rejects timings under which the leader could lose the lease
// while it still believes it leads: client-go requires
// Duration > RenewDeadline > RetryPeriod × 1.2 (its jitter).
func (l Lease) Validate() error {
	l = l.complete()
	if l.Duration <= l.RenewDeadline {
		return fmt.Errorf("--leader-elect-lease-duration (%s) must be longer than --leader-elect-renew-deadline (%s): a standby would take the lease while the leader still renews it", l.Duration, l.RenewDeadline)
	}
	if l.RenewDeadline <= time.Duration(1.2*float64(l.RetryPeriod)) {
		return fmt.Errorf("--leader-elect-renew-deadline (%s) must be longer than 1.2 × --leader-elect-retry-period (%s): the leader would give up before it tried to renew", l.RenewDeadline, l.RetryPeriod)
	}
	return nil
}

// leaseLock is the election's Lease, held under identity.
func leaseLock(cfg *rest.Config, identity string) (resourcelock.Interface, error) {
	client, err := kubernetes.NewForConfig(rest.AddUserAgent(rest.CopyConfig(cfg), "leader-election"))
	if err != nil {
		return nil, err
	}
	return resourcelock.New(resourcelock.LeasesResourceLock, Namespace, "flotilla-hub", client.CoreV1(), client.CoordinationV1(),
		resourcelock.ResourceLockConfig{Identity: identity})
}
