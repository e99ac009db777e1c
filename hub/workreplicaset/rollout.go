package workreplicaset

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// group identifies a decision group of a Placement.
type group struct {
	index int32
	name  string
}

// clusterState is what the rollout knows of one chosen cluster's work.
type clusterState struct {
	name  string
	group group
	// updated: the cluster's ManifestWork carries its rendered spec.
	updated bool
	// pushedAt is when that spec was written; meaningful when updated.
	pushedAt time.Time
	// available: the work is Applied and Available for its current
	// generation, since availableSince.
	available      bool
	availableSince time.Time
	// degraded: the work reports Degraded=True.
	degraded bool
}

// strategy is a RolloutStrategy with its numbers resolved for one Placement.
type strategy struct {
	kind workv1alpha1.RolloutType
	// maxConcurrency is the Progressive window (at least 1).
	maxConcurrency int
	// maxFailures is how many failed clusters the rollout tolerates.
	maxFailures int
	// minSuccessTime is how long a cluster must stay available to count
	// as succeeded (Progressive types only).
	minSuccessTime time.Duration
	// progressDeadline is how long a cluster may take; zero waits forever.
	progressDeadline time.Duration
	// mandatory are the decision groups rolled out first, in order.
	mandatory []workv1alpha1.MandatoryDecisionGroup
}

// outcome is where one cluster stands in the rollout.
type outcome int

const (
	toApply outcome = iota
	inFlight
	succeeded
	failed
)

// rolloutResult is the decision of one rollout step.
type rolloutResult struct {
	// push are the clusters that receive their rendered spec now.
	push []string
	// failed are the clusters that failed, each with why.
	failed []failure
	// inFlight counts clusters that have the new spec but have not yet
	// succeeded or failed; succeeded those that have.
	inFlight, succeeded int
	// stopped: more clusters failed than the strategy tolerates, so
	// nothing more is pushed; stopReason says why.
	stopped    bool
	stopReason string
	// complete: every cluster has its spec and none is in flight.
	complete bool
	// requeueAfter is when a timer (minSuccessTime, progressDeadline) of
	// an in-flight cluster runs out; zero when none does.
	requeueAfter time.Duration
}

// failure is a failed cluster and why it failed.
type failure struct {
	cluster, why string
}

// decideRollout decides which clusters receive their new spec now. It is
// pure: the clusters' states and the time in, the decision out.
//
// The rollout is a sliding window, as in OCM: Progressive keeps up to
// maxConcurrency clusters in flight, ProgressivePerGroup one decision group,
// All every cluster. Mandatory decision groups go first, a whole group at a
// time, and tolerate no failure. Once more clusters failed than
// maxFailures, nothing more is pushed until a failure clears.
func decideRollout(clusters []clusterState, st strategy, now time.Time) rolloutResult {
	var res rolloutResult
	minSuccess := st.minSuccessTime
	if st.kind == workv1alpha1.All {
		minSuccess = 0
	}
	outcomes := make(map[string]outcome, len(clusters))
	var soonest time.Time
	for _, c := range clusters {
		o, why, at := classify(c, minSuccess, st.progressDeadline, now)
		outcomes[c.name] = o
		switch o {
		case failed:
			res.failed = append(res.failed, failure{c.name, why})
		case inFlight:
			res.inFlight++
		case succeeded:
			res.succeeded++
		}
		if !at.IsZero() && (soonest.IsZero() || at.Before(soonest)) {
			soonest = at
		}
	}
	if !soonest.IsZero() {
		res.requeueAfter = max(soonest.Sub(now), time.Second)
	}

	ordered := slices.Clone(clusters)
	slices.SortFunc(ordered, func(a, b clusterState) int {
		return cmp.Or(cmp.Compare(a.group.index, b.group.index), cmp.Compare(a.name, b.name))
	})
	rest := ordered
	if st.kind != workv1alpha1.All {
		var stop bool
		rest, stop = rolloutMandatory(ordered, st.mandatory, outcomes, &res)
		if stop {
			return res
		}
	}
	if len(res.failed) > st.maxFailures {
		res.stopped = true
		res.stopReason = fmt.Sprintf("%d clusters failed, more than maxFailures %d", len(res.failed), st.maxFailures)
	}
	switch {
	case st.kind == workv1alpha1.All:
		// Everything goes at once: a failure has nothing left to hold back.
		res.push = namesWith(rest, outcomes, toApply, -1)
	case res.stopped:
	case st.kind == workv1alpha1.ProgressivePerGroup:
		res.push = nextGroup(rest, outcomes)
	default:
		flying := len(namesWith(rest, outcomes, inFlight, -1))
		if slots := st.maxConcurrency - flying; slots > 0 {
			res.push = namesWith(rest, outcomes, toApply, slots)
		}
	}
	res.complete = !res.stopped && res.inFlight == 0 && len(res.push) == 0 && len(namesWith(ordered, outcomes, toApply, -1)) == 0
	return res
}

// classify says where a cluster stands and, for one in flight, when its
// next timer (minSuccessTime or progressDeadline) runs out.
func classify(c clusterState, minSuccess, deadline time.Duration, now time.Time) (o outcome, why string, timer time.Time) {
	switch {
	case !c.updated:
		return toApply, "", time.Time{}
	case c.degraded:
		return failed, "Degraded", time.Time{}
	case c.available:
		// Available may have held since before the new spec: count from
		// whichever came last.
		since := c.availableSince
		if c.pushedAt.After(since) {
			since = c.pushedAt
		}
		if done := since.Add(minSuccess); now.Before(done) {
			return inFlight, "", done
		}
		return succeeded, "", time.Time{}
	case deadline > 0:
		end := c.pushedAt.Add(deadline)
		if !now.Before(end) {
			return failed, fmt.Sprintf("not Available within progressDeadline %s", deadline), time.Time{}
		}
		return inFlight, "", end
	default:
		return inFlight, "", time.Time{}
	}
}

// rolloutMandatory rolls out the mandatory decision groups, one whole group
// at a time, and returns the clusters in no mandatory group. stop says the
// rest must wait: a mandatory group is still in flight or failed.
func rolloutMandatory(ordered []clusterState, mandatory []workv1alpha1.MandatoryDecisionGroup, outcomes map[string]outcome, res *rolloutResult) (rest []clusterState, stop bool) {
	inMandatory := map[string]bool{}
	var blocked bool
	for _, m := range mandatory {
		var members []clusterState
		for _, c := range ordered {
			if !inMandatory[c.name] && matchesGroup(m, c.group) {
				members = append(members, c)
				inMandatory[c.name] = true
			}
		}
		if blocked || len(members) == 0 {
			continue
		}
		if bad := namesWith(members, outcomes, failed, -1); len(bad) > 0 {
			res.stopped = true
			res.stopReason = fmt.Sprintf("mandatory decision group %s failed on %v", groupLabel(members[0].group), bad)
			blocked = true
			continue
		}
		if pending := namesWith(members, outcomes, toApply, -1); len(pending) > 0 {
			res.push = append(res.push, pending...)
			blocked = true
			continue
		}
		if len(namesWith(members, outcomes, inFlight, -1)) > 0 {
			blocked = true
		}
	}
	for _, c := range ordered {
		if !inMandatory[c.name] {
			rest = append(rest, c)
		}
	}
	return rest, blocked
}

// matchesGroup: a mandatory group names its decision group by name, or else by index.
func matchesGroup(m workv1alpha1.MandatoryDecisionGroup, g group) bool {
	if m.GroupName != "" {
		return m.GroupName == g.name
	}
	return m.GroupIndex == g.index
}

func groupLabel(g group) string {
	if g.name != "" {
		return g.name
	}
	return fmt.Sprint(g.index)
}

// nextGroup returns the clusters to push in ProgressivePerGroup: those of
// the first decision group not yet done, once every earlier group is.
func nextGroup(ordered []clusterState, outcomes map[string]outcome) []string {
	for start := 0; start < len(ordered); {
		end := start
		for end < len(ordered) && ordered[end].group.index == ordered[start].group.index {
			end++
		}
		members := ordered[start:end]
		pending := namesWith(members, outcomes, toApply, -1)
		if len(pending) > 0 || len(namesWith(members, outcomes, inFlight, -1)) > 0 {
			return pending
		}
		start = end
	}
	return nil
}

// namesWith returns the names of up to limit clusters (all if limit < 0)
// with outcome o, in the given order.
func namesWith(clusters []clusterState, outcomes map[string]outcome, o outcome, limit int) []string {
	var out []string
	for _, c := range clusters {
		if limit >= 0 && len(out) >= limit {
			break
		}
		if outcomes[c.name] == o {
			out = append(out, c.name)
		}
	}
	return out
}

// resolveStrategy turns a RolloutStrategy into numbers for a Placement of
// total clusters whose decision groups hold clustersPerGroup each. An
// error names the field that can never be read.
func resolveStrategy(rs workv1alpha1.RolloutStrategy, total int, clustersPerGroup intstr.IntOrString, field string) (strategy, error) {
	st := strategy{kind: rs.Type, maxConcurrency: total}
	var cfg workv1alpha1.RolloutConfig
	switch rs.Type {
	case "", workv1alpha1.All:
		st.kind = workv1alpha1.All
		if rs.All != nil {
			cfg = rs.All.RolloutConfig
		}
	case workv1alpha1.Progressive:
		concurrency := clustersPerGroup
		if rs.Progressive != nil {
			cfg, st.mandatory = rs.Progressive.RolloutConfig, rs.Progressive.MandatoryDecisionGroups
			if rs.Progressive.MaxConcurrency != (intstr.IntOrString{}) {
				concurrency = rs.Progressive.MaxConcurrency
			}
		}
		if concurrency != (intstr.IntOrString{}) {
			n, err := intstr.GetScaledValueFromIntOrPercent(&concurrency, total, true)
			if err != nil {
				return st, fmt.Errorf("%s.progressive.maxConcurrency: %w; write a number or a percentage such as 25%%", field, err)
			}
			st.maxConcurrency = n
		}
	case workv1alpha1.ProgressivePerGroup:
		if rs.ProgressivePerGroup != nil {
			cfg, st.mandatory = rs.ProgressivePerGroup.RolloutConfig, rs.ProgressivePerGroup.MandatoryDecisionGroups
		}
	default:
		return st, fmt.Errorf("%s.type: %q is not All, Progressive or ProgressivePerGroup", field, rs.Type)
	}
	st.maxConcurrency = max(st.maxConcurrency, 1)
	failures, err := intstr.GetScaledValueFromIntOrPercent(&cfg.MaxFailures, total, false)
	if err != nil {
		return st, fmt.Errorf("%s: maxFailures: %w; write a number or a percentage such as 10%%", field, err)
	}
	st.maxFailures = failures
	st.minSuccessTime = cfg.MinSuccessTime.Duration
	if cfg.ProgressDeadline != "" && cfg.ProgressDeadline != workv1alpha1.ProgressDeadlineNone {
		d, err := time.ParseDuration(cfg.ProgressDeadline)
		if err != nil || d <= 0 {
			return st, fmt.Errorf("%s: progressDeadline %q is neither None nor a positive duration such as 90s, 10m or 2h", field, cfg.ProgressDeadline)
		}
		st.progressDeadline = d
	}
	return st, nil
}
