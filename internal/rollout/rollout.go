package rollout

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// Group identifies a decision group of a Placement.
type Group struct {
	Index int32
	Name  string
}

// Cluster is what the rollout knows of one chosen cluster.
type Cluster struct {
	Name  string
	Group Group
	// Updated: the cluster carries its new spec (a work, an add-on's
	// desired configs).
	Updated bool
	// PushedAt is when that spec was written; meaningful when Updated.
	PushedAt time.Time
	// Available: the cluster runs the new spec successfully, since
	// AvailableSince.
	Available      bool
	AvailableSince time.Time
	// Degraded: the cluster failed with the new spec.
	Degraded bool
}

// Strategy is a RolloutStrategy with its numbers resolved for one Placement.
type Strategy struct {
	Kind workv1alpha1.RolloutType
	// MaxConcurrency is the Progressive window (at least 1).
	MaxConcurrency int
	// MaxFailures is how many failed clusters the rollout tolerates.
	MaxFailures int
	// MinSuccessTime is how long a cluster must stay available to count
	// as succeeded (Progressive types only).
	MinSuccessTime time.Duration
	// ProgressDeadline is how long a cluster may take; zero waits forever.
	ProgressDeadline time.Duration
	// Mandatory are the decision groups rolled out first, in order.
	Mandatory []workv1alpha1.MandatoryDecisionGroup
}

// outcome is where one cluster stands in the rollout.
type outcome int

const (
	toApply outcome = iota
	inFlight
	succeeded
	failed
)

// Result is the decision of one rollout step.
type Result struct {
	// Push are the clusters that receive their new spec now.
	Push []string
	// Failed are the clusters that failed, each with why.
	Failed []Failure
	// InFlight counts clusters that have the new spec but have not yet
	// succeeded or failed; Succeeded those that have.
	InFlight, Succeeded int
	// Stopped: more clusters failed than the strategy tolerates, so
	// nothing more is pushed; StopReason says why.
	Stopped    bool
	StopReason string
	// Complete: every cluster has its spec and none is in flight.
	Complete bool
	// RequeueAfter is when a timer (minSuccessTime, progressDeadline) of
	// an in-flight cluster runs out; zero when none does.
	RequeueAfter time.Duration
}

// Failure is a failed cluster and why it failed.
type Failure struct {
	Cluster, Why string
}

// Decide decides which clusters receive their new spec now. It is
// pure: the clusters' states and the time in, the decision out.
//
// The rollout is a sliding window, as in OCM: Progressive keeps up to
// maxConcurrency clusters in flight, ProgressivePerGroup one decision group,
// All every cluster. Mandatory decision groups go first, a whole group at a
// time, and tolerate no failure. Once more clusters failed than
// maxFailures, nothing more is pushed until a failure clears.
func Decide(clusters []Cluster, st Strategy, now time.Time) Result {
	var res Result
	minSuccess := st.MinSuccessTime
	if st.Kind == workv1alpha1.All {
		minSuccess = 0
	}
	outcomes := make(map[string]outcome, len(clusters))
	var soonest time.Time
	for _, c := range clusters {
		o, why, at := classify(c, minSuccess, st.ProgressDeadline, now)
		outcomes[c.Name] = o
		switch o {
		case failed:
			res.Failed = append(res.Failed, Failure{c.Name, why})
		case inFlight:
			res.InFlight++
		case succeeded:
			res.Succeeded++
		}
		if !at.IsZero() && (soonest.IsZero() || at.Before(soonest)) {
			soonest = at
		}
	}
	if !soonest.IsZero() {
		res.RequeueAfter = max(soonest.Sub(now), time.Second)
	}

	ordered := slices.Clone(clusters)
	slices.SortFunc(ordered, func(a, b Cluster) int {
		return cmp.Or(cmp.Compare(a.Group.Index, b.Group.Index), cmp.Compare(a.Name, b.Name))
	})
	rest := ordered
	if st.Kind != workv1alpha1.All {
		var stop bool
		rest, stop = rolloutMandatory(ordered, st.Mandatory, outcomes, &res)
		if stop {
			return res
		}
	}
	if len(res.Failed) > st.MaxFailures {
		res.Stopped = true
		res.StopReason = fmt.Sprintf("%d clusters failed, more than maxFailures %d", len(res.Failed), st.MaxFailures)
	}
	switch {
	case st.Kind == workv1alpha1.All:
		// Everything goes at once: a failure has nothing left to hold back.
		res.Push = namesWith(rest, outcomes, toApply, -1)
	case res.Stopped:
	case st.Kind == workv1alpha1.ProgressivePerGroup:
		res.Push = nextGroup(rest, outcomes)
	default:
		flying := len(namesWith(rest, outcomes, inFlight, -1))
		if slots := st.MaxConcurrency - flying; slots > 0 {
			res.Push = namesWith(rest, outcomes, toApply, slots)
		}
	}
	res.Complete = !res.Stopped && res.InFlight == 0 && len(res.Push) == 0 && len(namesWith(ordered, outcomes, toApply, -1)) == 0
	return res
}

// classify says where a cluster stands and, for one in flight, when its
// next timer (minSuccessTime or progressDeadline) runs out.
func classify(c Cluster, minSuccess, deadline time.Duration, now time.Time) (o outcome, why string, timer time.Time) {
	switch {
	case !c.Updated:
		return toApply, "", time.Time{}
	case c.Degraded:
		return failed, "Degraded", time.Time{}
	case c.Available:
		// Available may have held since before the new spec: count from
		// whichever came last.
		since := c.AvailableSince
		if c.PushedAt.After(since) {
			since = c.PushedAt
		}
		if done := since.Add(minSuccess); now.Before(done) {
			return inFlight, "", done
		}
		return succeeded, "", time.Time{}
	case deadline > 0:
		end := c.PushedAt.Add(deadline)
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
func rolloutMandatory(ordered []Cluster, mandatory []workv1alpha1.MandatoryDecisionGroup, outcomes map[string]outcome, res *Result) (rest []Cluster, stop bool) {
	inMandatory := map[string]bool{}
	var blocked bool
	for _, m := range mandatory {
		var members []Cluster
		for _, c := range ordered {
			if !inMandatory[c.Name] && matchesGroup(m, c.Group) {
				members = append(members, c)
				inMandatory[c.Name] = true
			}
		}
		if blocked || len(members) == 0 {
			continue
		}
		if bad := namesWith(members, outcomes, failed, -1); len(bad) > 0 {
			res.Stopped = true
			res.StopReason = fmt.Sprintf("mandatory decision group %s failed on %v", groupLabel(members[0].Group), bad)
			blocked = true
			continue
		}
		if pending := namesWith(members, outcomes, toApply, -1); len(pending) > 0 {
			res.Push = append(res.Push, pending...)
			blocked = true
			continue
		}
		if len(namesWith(members, outcomes, inFlight, -1)) > 0 {
			blocked = true
		}
	}
	for _, c := range ordered {
		if !inMandatory[c.Name] {
			rest = append(rest, c)
		}
	}
	return rest, blocked
}

// matchesGroup: a mandatory group names its decision group by name, or else by index.
func matchesGroup(m workv1alpha1.MandatoryDecisionGroup, g Group) bool {
	if m.GroupName != "" {
		return m.GroupName == g.Name
	}
	return m.GroupIndex == g.Index
}

func groupLabel(g Group) string {
	if g.Name != "" {
		return g.Name
	}
	return fmt.Sprint(g.Index)
}

// nextGroup returns the clusters to push in ProgressivePerGroup: those of
// the first decision group not yet done, once every earlier group is.
func nextGroup(ordered []Cluster, outcomes map[string]outcome) []string {
	for start := 0; start < len(ordered); {
		end := start
		for end < len(ordered) && ordered[end].Group.Index == ordered[start].Group.Index {
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
func namesWith(clusters []Cluster, outcomes map[string]outcome, o outcome, limit int) []string {
	var out []string
	for _, c := range clusters {
		if limit >= 0 && len(out) >= limit {
			break
		}
		if outcomes[c.Name] == o {
			out = append(out, c.Name)
		}
	}
	return out
}

// ResolveStrategy turns a RolloutStrategy into numbers for a Placement of
// total clusters whose decision groups hold clustersPerGroup each. An
// error names the field that can never be read.
func ResolveStrategy(rs workv1alpha1.RolloutStrategy, total int, clustersPerGroup intstr.IntOrString, field string) (Strategy, error) {
	st := Strategy{Kind: rs.Type, MaxConcurrency: total}
	var cfg workv1alpha1.RolloutConfig
	switch rs.Type {
	case "", workv1alpha1.All:
		st.Kind = workv1alpha1.All
		if rs.All != nil {
			cfg = rs.All.RolloutConfig
		}
	case workv1alpha1.Progressive:
		concurrency := clustersPerGroup
		if rs.Progressive != nil {
			cfg, st.Mandatory = rs.Progressive.RolloutConfig, rs.Progressive.MandatoryDecisionGroups
			if rs.Progressive.MaxConcurrency != (intstr.IntOrString{}) {
				concurrency = rs.Progressive.MaxConcurrency
			}
		}
		if concurrency != (intstr.IntOrString{}) {
			n, err := intstr.GetScaledValueFromIntOrPercent(&concurrency, total, true)
			if err != nil {
				return st, fmt.Errorf("%s.progressive.MaxConcurrency: %w; write a number or a percentage such as 25%%", field, err)
			}
			st.MaxConcurrency = n
		}
	case workv1alpha1.ProgressivePerGroup:
		if rs.ProgressivePerGroup != nil {
			cfg, st.Mandatory = rs.ProgressivePerGroup.RolloutConfig, rs.ProgressivePerGroup.MandatoryDecisionGroups
		}
	default:
		return st, fmt.Errorf("%s.type: %q is not All, Progressive or ProgressivePerGroup", field, rs.Type)
	}
	st.MaxConcurrency = max(st.MaxConcurrency, 1)
	failures, err := intstr.GetScaledValueFromIntOrPercent(&cfg.MaxFailures, total, false)
	if err != nil {
		return st, fmt.Errorf("%s: maxFailures: %w; write a number or a percentage such as 10%%", field, err)
	}
	st.MaxFailures = failures
	st.MinSuccessTime = cfg.MinSuccessTime.Duration
	if cfg.ProgressDeadline != "" && cfg.ProgressDeadline != workv1alpha1.ProgressDeadlineNone {
		d, err := time.ParseDuration(cfg.ProgressDeadline)
		if err != nil || d <= 0 {
			return st, fmt.Errorf("%s: progressDeadline %q is neither None nor a positive duration such as 90s, 10m or 2h", field, cfg.ProgressDeadline)
		}
		st.ProgressDeadline = d
	}
	return st, nil
}
