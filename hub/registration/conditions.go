package registration

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
)

// leaseGraceMultiple is how many lease periods may pass without a renewal
// before the hub stops trusting a cluster's Available condition.
const leaseGraceMultiple = 5

// acceptedCondition returns the HubAcceptedManagedCluster condition that
// spec.hubAcceptsClient asks for, given the current one; nil means that no
// condition is to be set (a cluster that was never accepted has none).
//
// It carries no observedGeneration, as OCM's hub writes it: the verdict
// follows spec.hubAcceptsClient alone, and keeping a generation in it
// current cost a status write after every other change of the spec (the
// hub's own taint changes among them: one more write per joining cluster).
func acceptedCondition(accepts bool, current *metav1.Condition) *metav1.Condition {
	if accepts {
		return &metav1.Condition{
			Type:    clusterv1.ManagedClusterConditionHubAccepted,
			Status:  metav1.ConditionTrue,
			Reason:  clusterv1.ReasonHubClusterAdminAccepted,
			Message: "Accepted by hub cluster admin",
		}
	}
	if current == nil {
		return nil
	}
	return &metav1.Condition{
		Type:    clusterv1.ManagedClusterConditionHubAccepted,
		Status:  metav1.ConditionFalse,
		Reason:  clusterv1.ReasonHubClusterAdminDenied,
		Message: "Denied by hub cluster admin",
	}
}

// invalidNameCondition reports a cluster name that cannot name its namespace.
func invalidNameCondition(problems []string, generation int64) metav1.Condition {
	return metav1.Condition{
		Type:   clusterv1.ManagedClusterConditionHubAccepted,
		Status: metav1.ConditionFalse,
		Reason: reasonInvalidClusterName,
		Message: fmt.Sprintf("the cluster name cannot name the cluster's hub namespace (%v): "+
			"register the cluster again under a name of at most 63 lower-case letters, digits and '-'", problems),
		ObservedGeneration: generation,
	}
}

// leaseGracePeriod is how long the hub waits for a lease renewal before it
// marks the cluster Available=Unknown.
func leaseGracePeriod(leaseDurationSeconds int32) time.Duration {
	return leaseGraceMultiple * time.Duration(leasePeriod(leaseDurationSeconds)) * time.Second
}

// leasePeriod is spec.leaseDurationSeconds with its default applied.
func leasePeriod(leaseDurationSeconds int32) int32 {
	if leaseDurationSeconds <= 0 {
		return clusterv1.DefaultLeaseDurationSeconds
	}
	return leaseDurationSeconds
}

// leaseCheck says whether a lease last renewed at renewed has expired at
// now and, if it has not, how long it has left.
func leaseCheck(renewed time.Time, leaseDurationSeconds int32, now time.Time) (expired bool, left time.Duration) {
	left = renewed.Add(leaseGracePeriod(leaseDurationSeconds)).Sub(now)
	if left <= 0 {
		return true, 0
	}
	return false, left
}

// leaseStoppedCondition is the Available condition of a cluster whose agent
// stopped renewing its lease.
func leaseStoppedCondition(leaseDurationSeconds int32, generation int64) metav1.Condition {
	return metav1.Condition{
		Type:   clusterv1.ManagedClusterConditionAvailable,
		Status: metav1.ConditionUnknown,
		Reason: clusterv1.ReasonManagedClusterLeaseUpdateStopped,
		Message: fmt.Sprintf("The agent stopped renewing its lease %s: no renewal for %s.",
			clusterv1.ManagedClusterLeaseName, leaseGracePeriod(leaseDurationSeconds)),
		ObservedGeneration: generation,
	}
}

// hubTaints says which hub-owned taints a cluster with the given Available
// condition carries: unreachable while Available is Unknown or not yet
// reported, unavailable while it is False, neither while it is True.
func hubTaints(available *metav1.Condition) (unreachable, unavailable bool) {
	switch {
	case available == nil || available.Status == metav1.ConditionUnknown:
		return true, false
	case available.Status == metav1.ConditionFalse:
		return false, true
	default:
		return false, false
	}
}

// desiredTaints returns taints with the hub-owned taints in step with the
// Available condition. Other taints are kept as they are, in order; a
// hub taint that stays keeps its timeAdded, a new one gets now.
func desiredTaints(taints []clusterv1.Taint, available *metav1.Condition, now metav1.Time) []clusterv1.Taint {
	unreachable, unavailable := hubTaints(available)
	want := map[string]bool{
		clusterv1.ManagedClusterTaintUnreachable: unreachable,
		clusterv1.ManagedClusterTaintUnavailable: unavailable,
	}
	have := map[string]bool{}
	var out []clusterv1.Taint
	for _, t := range taints {
		wanted, hubOwned := want[t.Key]
		switch {
		case !hubOwned:
			out = append(out, t)
		case !wanted || have[t.Key]:
			// Dropped: not (or no longer) wanted, or a duplicate.
		default:
			if t.Effect != clusterv1.TaintEffectNoSelect || t.Value != "" || t.TimeAdded.IsZero() {
				t = clusterv1.Taint{Key: t.Key, Effect: clusterv1.TaintEffectNoSelect, TimeAdded: now}
			}
			out = append(out, t)
			have[t.Key] = true
		}
	}
	for _, key := range []string{clusterv1.ManagedClusterTaintUnreachable, clusterv1.ManagedClusterTaintUnavailable} {
		if want[key] && !have[key] {
			out = append(out, clusterv1.Taint{Key: key, Effect: clusterv1.TaintEffectNoSelect, TimeAdded: now})
		}
	}
	return out
}
