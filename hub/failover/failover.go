package failover

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
)

// DefaultGrace is the failover grace of a Placement without the
// annotation: long enough to ride out an API server restart or a short
// network partition, short enough that a cluster that is really gone does
// not hold its copies for long.
const DefaultGrace = 5 * time.Minute

// ReturnGrace bounds how long a cluster back from an outage keeps what it
// has while waiting for its Placements' next decision, which follows the
// taint's removal within moments.
const ReturnGrace = 30 * time.Second

// HealthTaint returns the taint the hub set on mc for its health, the
// earliest added if both are there, and when it was added; "" when mc has
// neither.
func HealthTaint(mc *clusterv1.ManagedCluster) (key string, since time.Time) {
	for _, t := range mc.Spec.Taints {
		if t.Key != clusterv1.ManagedClusterTaintUnreachable && t.Key != clusterv1.ManagedClusterTaintUnavailable {
			continue
		}
		if key == "" || t.TimeAdded.Before(&metav1.Time{Time: since}) {
			key, since = t.Key, t.TimeAdded.Time
		}
	}
	return key, since
}

// ShortTaint is a health taint's key without its prefix, for messages.
func ShortTaint(key string) string {
	switch key {
	case clusterv1.ManagedClusterTaintUnreachable:
		return "unreachable"
	case clusterv1.ManagedClusterTaintUnavailable:
		return "unavailable"
	}
	return key
}

// Grace is the failover grace Placement p asks for: DefaultGrace without
// FailoverGraceAnnotation. A value that is not a duration of zero or more
// gives DefaultGrace and an error that says what to fix.
func Grace(p *clusterv1beta1.Placement) (time.Duration, error) {
	v, ok := p.Annotations[clusterv1beta1.FailoverGraceAnnotation]
	if !ok {
		return DefaultGrace, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return DefaultGrace, fmt.Errorf("annotation %s=%q of Placement %s/%s is not a duration of 0s or more (such as 10m): the default %s applies",
			clusterv1beta1.FailoverGraceAnnotation, v, p.Namespace, p.Name, DefaultGrace)
	}
	return d, nil
}

// Leaver is a cluster that has a copy (a ManifestWork, a replicated
// policy) but is no longer chosen.
type Leaver struct {
	Cluster string
	// Taint is the hub's health taint on the cluster ("" for none), added
	// at Since.
	Taint string
	Since time.Time
	// Grace is how long it keeps its copy without a replacement.
	Grace time.Duration
}

// Candidate is a chosen cluster that may be a leaver's replacement.
type Candidate struct {
	Cluster string
	// Created is when its copy was created; zero if it has none yet.
	Created time.Time
	// Ready says its copy does what the leaver's did (a work Available, a
	// policy that reported its compliance).
	Ready bool
}

// Kept says why a leaver keeps its copy.
type Kept struct {
	// Taint is the leaver's health taint.
	Taint string
	// Replacement is the cluster whose readiness it waits for; "" when
	// none was chosen, and it waits at most Until.
	Replacement string
	Until       time.Time
}

// Keep decides which leavers keep their copy, so that a blip moves
// nothing and an outage never leaves fewer copies than before. A leaver
// the hub tainted for health keeps it until a replacement is ready: a
// chosen cluster whose copy did not exist before the taint was added, each
// replacing one leaver, in name order. A leaver with no replacement keeps
// it until its taint is older than its grace (a cluster back by then is
// chosen again, and its copy, never deleted, carries on). Leavers without
// a health taint keep nothing. next is when the first grace runs out
// (zero when none is running), for the caller to look again.
func Keep(leavers []Leaver, chosen []Candidate, now time.Time) (kept map[string]Kept, next time.Time) {
	leavers = slices.Clone(leavers)
	slices.SortFunc(leavers, func(a, b Leaver) int { return cmp.Compare(a.Cluster, b.Cluster) })
	chosen = slices.Clone(chosen)
	slices.SortFunc(chosen, func(a, b Candidate) int { return cmp.Compare(a.Cluster, b.Cluster) })
	taken := map[string]bool{}
	kept = map[string]Kept{}
	for _, l := range leavers {
		if l.Taint == "" {
			continue
		}
		// Timestamps have whole seconds: a copy created in the same second
		// as the taint came after it.
		since := l.Since.Truncate(time.Second)
		replaced := false
		for _, c := range chosen {
			if taken[c.Cluster] || (!c.Created.IsZero() && c.Created.Before(since)) {
				continue
			}
			taken[c.Cluster], replaced = true, true
			if !c.Ready {
				kept[l.Cluster] = Kept{Taint: l.Taint, Replacement: c.Cluster}
			}
			break
		}
		if replaced {
			continue
		}
		if until := l.Since.Add(l.Grace); now.Before(until) {
			kept[l.Cluster] = Kept{Taint: l.Taint, Until: until}
			if next.IsZero() || until.Before(next) {
				next = until
			}
		}
	}
	return kept, next
}

// ReturnWait is how much longer a leaver mc, not chosen now, keeps its
// copy because it came back from an outage since its Placements last
// decided (decided, the oldest of their last decisions): 0 when it still
// has a health taint (Keep decides), was back before the last decision,
// or came back over ReturnGrace ago. It came back when its Available
// condition last turned True; timestamps have whole seconds, so a
// decision in the same second counts as before it.
func ReturnWait(mc *clusterv1.ManagedCluster, decided, now time.Time) time.Duration {
	if key, _ := HealthTaint(mc); key != "" {
		return 0
	}
	cond := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
	if cond == nil || cond.Status != metav1.ConditionTrue {
		return 0
	}
	back := cond.LastTransitionTime.Time
	if decided.Truncate(time.Second).After(back.Truncate(time.Second)) {
		return 0
	}
	return max(back.Add(ReturnGrace).Sub(now), 0)
}

// DecidedAt is when a PlacementDecision was last written: the latest of
// its creation and the times of its managed fields.
func DecidedAt(pd *clusterv1beta1.PlacementDecision) time.Time {
	at := pd.CreationTimestamp.Time
	for _, f := range pd.ManagedFields {
		if f.Time != nil && f.Time.After(at) {
			at = f.Time.Time
		}
	}
	return at
}
