package scheduler

import (
	"time"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
)

// Every prioritizer scores a cluster from minScore to maxScore; the
// weighted sum over the prioritizers is the cluster's score.
const (
	maxScore = 100
	minScore = -100
)

// score sets the combined score of every candidate and returns the
// soonest time an AddOnPlacementScore in use expires (zero: none does).
func (pl *plan) score(cands []*candidate, in *Input) time.Time {
	var expiry time.Time
	for _, p := range pl.prioritizers {
		var raw func(*candidate) int64
		switch {
		case p.addOn != nil:
			var exp time.Time
			raw, exp = addOnScores(p.addOn, cands, in)
			if !exp.IsZero() && (expiry.IsZero() || exp.Before(expiry)) {
				expiry = exp
			}
		case p.builtIn == clusterv1beta1.PrioritizerBalance:
			raw = balanceScores(in.DecisionCounts)
		case p.builtIn == clusterv1beta1.PrioritizerSteady:
			if pl.steady {
				// A positive weight is applied as a rule when ranking
				// (chosen clusters first), not as points: scores stay
				// comparable between chosen and new clusters.
				continue
			}
			raw = steadyScore
		case p.builtIn == clusterv1beta1.PrioritizerResourceAllocatableCPU:
			raw = allocatableScores(cands, clusterv1.ResourceCPU)
		case p.builtIn == clusterv1beta1.PrioritizerResourceAllocatableMemory:
			raw = allocatableScores(cands, clusterv1.ResourceMemory)
		default:
			// Spread is applied when clusters are picked, not by scores.
			continue
		}
		for _, c := range cands {
			c.score += p.weight * raw(c)
		}
	}
	return expiry
}

// steadyScore prefers the clusters already chosen.
func steadyScore(c *candidate) int64 {
	if c.chosen {
		return maxScore
	}
	return 0
}

// balanceScores prefers clusters that fewer other placements chose: a
// cluster no other placement chose scores 100, the most chosen -100, as in
// OCM.
func balanceScores(counts map[string]int) func(*candidate) int64 {
	most := 0
	for _, n := range counts {
		most = max(most, n)
	}
	return func(c *candidate) int64 {
		n := counts[c.cluster.Name]
		if n == 0 || most == 0 {
			return maxScore
		}
		usage := float64(n) / float64(most)
		return 2 * int64(float64(maxScore)*(0.5-usage))
	}
}

// allocatableScores scales status.allocatable of resource among the
// candidates from -100 (least) to 100 (most); all equal score 100, and a
// cluster that does not report the resource scores -100.
func allocatableScores(cands []*candidate, resource clusterv1.ResourceName) func(*candidate) int64 {
	values := make(map[*candidate]float64, len(cands))
	first := true
	var lo, hi float64
	for _, c := range cands {
		q, ok := c.cluster.Status.Allocatable[resource]
		if !ok {
			continue
		}
		v := q.AsApproximateFloat64()
		values[c] = v
		if first {
			lo, hi, first = v, v, false
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	return func(c *candidate) int64 {
		v, ok := values[c]
		switch {
		case !ok:
			return minScore
		case hi == lo:
			return maxScore
		}
		return 2 * int64(float64(maxScore)*((v-lo)/(hi-lo)-0.5))
	}
}

// addOnScores reads one score of the AddOnPlacementScores, clamped to
// -100..100; a cluster without it, or whose scores expired, scores 0. It
// also returns the soonest future validUntil among them.
func addOnScores(a *clusterv1beta1.AddOnScore, cands []*candidate, in *Input) (func(*candidate) int64, time.Time) {
	var expiry time.Time
	for _, c := range cands {
		s := in.Scores[c.cluster.Name][a.ResourceName]
		if s == nil || s.Status.ValidUntil == nil || !in.Now.Before(s.Status.ValidUntil.Time) {
			continue
		}
		if expiry.IsZero() || s.Status.ValidUntil.Time.Before(expiry) {
			expiry = s.Status.ValidUntil.Time
		}
	}
	return func(c *candidate) int64 {
		s := in.Scores[c.cluster.Name][a.ResourceName]
		if s == nil || expired(s, in.Now) {
			return 0
		}
		for _, item := range s.Status.Scores {
			if item.Name == a.ScoreName {
				return min(max(int64(item.Value), minScore), maxScore)
			}
		}
		return 0
	}, expiry
}

// expired says whether an AddOnPlacementScore is past its validUntil.
func expired(s *clusterv1alpha1.AddOnPlacementScore, now time.Time) bool {
	return s.Status.ValidUntil != nil && !now.Before(s.Status.ValidUntil.Time)
}
