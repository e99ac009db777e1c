package registration

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// leaseChangeAnnotation on a cluster's lease records a change of
// spec.leaseDurationSeconds that its agent may not follow yet:
// "<new seconds>@<when the hub saw it, RFC 3339>". The lease's own
// spec.leaseDurationSeconds is the period the agent is known to renew at;
// the hub writes both, so that a restarted hub (or another replica) goes
// on where this one was.
const leaseChangeAnnotation = "cluster.flotilla.io/lease-duration-change"

// leaseChangeSettle is the least time the hub allows an agent to learn a
// new lease duration (its watch of the ManagedCluster delivers it within
// moments): a renewal made later than that after the hub saw the change
// was scheduled by an agent that knew it.
const leaseChangeSettle = 5 * time.Second

// leaseFollow is how the hub judges a lease while the agent may still be
// renewing at a previous period.
type leaseFollow struct {
	// graceSeconds is the lease period whose grace applies (5 × it after
	// the last renewal, the lease expires).
	graceSeconds int32
	// period and change are what the lease is to record: the period the
	// agent renews at, and the change it has not followed yet ("": none).
	period int32
	change string
	// recheck is how soon to look again for a renewal at the new period;
	// 0 when no change is pending.
	recheck time.Duration
}

// followLease decides the grace of lease, given spec.leaseDurationSeconds,
// at now. When the spec's period differs from the one the agent is known
// to renew at, the agent may be in the middle of a sleep of the old
// period: the longer of the two graces applies until a renewal shows that
// it renews at the new one, i.e. one made more than the settle time after
// the hub saw the change (the agent reads the period before each renewal
// and sleeps that long after it). Pure: the lease, the spec and the time
// in, the verdict out.
func followLease(lease *coordinationv1.Lease, specSeconds int32, now time.Time) leaseFollow {
	want := leasePeriod(specSeconds)
	known := want
	if d := lease.Spec.LeaseDurationSeconds; d != nil && *d > 0 {
		known = *d
	}
	done := leaseFollow{graceSeconds: want, period: want}
	if known == want {
		return done
	}
	target, seen, ok := parseLeaseChange(lease.Annotations[leaseChangeAnnotation])
	switch {
	case !ok:
		seen = now
	case target != want:
		// Changed again before the agent followed: it may renew at either
		// earlier period, so the longer of them stays the known one.
		known, seen = max(known, target), now
	}
	settle := max(time.Duration(want)*time.Second, leaseChangeSettle)
	if renewTime(lease).After(seen.Add(settle)) {
		return done
	}
	// The first renewal at the new period is due at most one new period
	// after the settle time.
	recheck := max(seen.Add(settle+time.Duration(want)*time.Second+time.Second).Sub(now), time.Second)
	return leaseFollow{
		graceSeconds: max(known, want),
		period:       known,
		change:       formatLeaseChange(want, seen),
		recheck:      recheck,
	}
}

func formatLeaseChange(seconds int32, seen time.Time) string {
	return fmt.Sprintf("%d@%s", seconds, seen.UTC().Format(time.RFC3339Nano))
}

func parseLeaseChange(v string) (seconds int32, seen time.Time, ok bool) {
	n, at, found := strings.Cut(v, "@")
	if !found {
		return 0, time.Time{}, false
	}
	s, err := strconv.ParseInt(n, 10, 32)
	if err != nil || s <= 0 {
		return 0, time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return 0, time.Time{}, false
	}
	return int32(s), t, true
}

// recordLeaseChange writes to the lease what f says it is to record, when
// that differs from what it holds: a merge patch of the annotation and
// spec.leaseDurationSeconds only, which never undoes a renewal.
func (r *ClusterReconciler) recordLeaseChange(ctx context.Context, lease *coordinationv1.Lease, f leaseFollow) error {
	have := lease.Annotations[leaseChangeAnnotation]
	havePeriod := int32(0)
	if lease.Spec.LeaseDurationSeconds != nil {
		havePeriod = *lease.Spec.LeaseDurationSeconds
	}
	if have == f.change && (havePeriod == f.period || (havePeriod <= 0 && f.change == "")) {
		return nil
	}
	before := lease.DeepCopy()
	if f.change == "" {
		delete(lease.Annotations, leaseChangeAnnotation)
	} else {
		if lease.Annotations == nil {
			lease.Annotations = map[string]string{}
		}
		lease.Annotations[leaseChangeAnnotation] = f.change
	}
	lease.Spec.LeaseDurationSeconds = ptr.To(f.period)
	if err := r.Client.Patch(ctx, lease, client.MergeFrom(before)); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("record the lease duration change on lease %s/%s: %w", lease.Namespace, lease.Name, err)
	}
	return nil
}
