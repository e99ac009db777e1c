package scheduler

import (
	"cmp"
	"slices"
	"strings"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
)

// candidate is a cluster that passed the predicates and taints.
type candidate struct {
	cluster *clusterv1.ManagedCluster
	// chosen: the cluster is in the placement's current decisions.
	chosen bool
	// avoid counts untolerated PreferNoSelect taints.
	avoid int
	// score is the weighted sum of the prioritizers' scores.
	score int64
	// predicate is the index of the first matching predicate, -1 without predicates.
	predicate int
}

// rank orders candidates from most to least preferred: when sticky, the
// clusters already chosen come first (a chosen cluster stays while it
// qualifies); then those with fewer untolerated PreferNoSelect taints;
// then higher scores; then names, so that ties break the same way every
// time.
func rank(cands []*candidate, sticky bool) []*candidate {
	out := slices.Clone(cands)
	slices.SortFunc(out, func(a, b *candidate) int {
		if sticky && a.chosen != b.chosen {
			if a.chosen {
				return -1
			}
			return 1
		}
		if a.avoid != b.avoid {
			return cmp.Compare(a.avoid, b.avoid)
		}
		if a.score != b.score {
			return cmp.Compare(b.score, a.score)
		}
		return strings.Compare(a.cluster.Name, b.cluster.Name)
	})
	return out
}

// pickResult is the outcome of picking.
type pickResult struct {
	selected []*candidate
	// noTopology counts candidates left out because they lack the key of a
	// DoNotSchedule constraint, by key.
	noTopology map[string]int
	// blocked counts candidates left out because taking them would break
	// the maxSkew of a DoNotSchedule constraint, by key.
	blocked map[string]int
}

// pick takes up to n of the ranked candidates. Without spread constraints
// it takes the first n. With them it takes, one at a time, the best-ranked
// candidate whose topologies keep every DoNotSchedule constraint within
// its maxSkew and that breaks the ScheduleAnyway constraints least.
func (pl *plan) pick(ranked []*candidate, n int) pickResult {
	if len(pl.spread) == 0 {
		return pickResult{selected: ranked[:min(n, len(ranked))]}
	}
	sp := newSpreader(pl.spread, ranked)
	res := pickResult{noTopology: sp.noTopology, blocked: map[string]int{}}
	for len(res.selected) < n {
		g := sp.next()
		if g == nil {
			break
		}
		res.selected = append(res.selected, sp.take(g))
	}
	if len(res.selected) < n {
		for _, g := range sp.groups {
			if left := len(g.members) - g.head; left > 0 {
				res.blocked[sp.blockingTerm(g)] += left
			}
		}
	}
	return res
}

// spreader tracks how many clusters each topology got.
type spreader struct {
	terms []spreadTerm
	// counts[t][v] is the number of clusters taken with value v of term t.
	counts []map[string]int
	// atCount[t][k] is the number of values of term t taken k times, to
	// keep the minimum current without scanning.
	atCount []map[int]int
	least   []int
	groups  []*topoGroup
	// noTopology counts candidates without a DoNotSchedule key, by key.
	noTopology map[string]int
}

// topoGroup holds the candidates that share all topology values, in rank order.
type topoGroup struct {
	values  []string
	has     []bool
	members []*candidate
	// ranks[i] is the rank of members[i] among all candidates.
	ranks []int
	head  int
}

func newSpreader(terms []spreadTerm, ranked []*candidate) *spreader {
	sp := &spreader{terms: terms, noTopology: map[string]int{}}
	byKey := map[string]*topoGroup{}
	for range terms {
		sp.counts = append(sp.counts, map[string]int{})
		sp.atCount = append(sp.atCount, map[int]int{})
		sp.least = append(sp.least, 0)
	}
	var claims map[*clusterv1.ManagedCluster]map[string]string
candidates:
	for rankIdx, c := range ranked {
		values, has := make([]string, len(terms)), make([]bool, len(terms))
		for t, term := range terms {
			var v string
			var ok bool
			if term.claim {
				if claims == nil {
					claims = map[*clusterv1.ManagedCluster]map[string]string{}
				}
				if claims[c.cluster] == nil {
					claims[c.cluster] = claimLabels(c.cluster)
				}
				v, ok = claims[c.cluster][term.key]
			} else {
				v, ok = c.cluster.Labels[term.key]
			}
			if !ok && term.required {
				sp.noTopology[term.key]++
				continue candidates
			}
			values[t], has[t] = v, ok
		}
		key := strings.Join(values, "\x00") + "\x00" + boolsKey(has)
		g := byKey[key]
		if g == nil {
			g = &topoGroup{values: values, has: has}
			byKey[key] = g
			sp.groups = append(sp.groups, g)
			for t := range terms {
				if has[t] {
					if _, seen := sp.counts[t][values[t]]; !seen {
						sp.counts[t][values[t]] = 0
						sp.atCount[t][0]++
					}
				}
			}
		}
		g.members = append(g.members, c)
		g.ranks = append(g.ranks, rankIdx)
	}
	return sp
}

func boolsKey(bs []bool) string {
	var b strings.Builder
	for _, v := range bs {
		if v {
			b.WriteByte('1')
		} else {
			b.WriteByte('0')
		}
	}
	return b.String()
}

// skewAfter is how far above the least-taken value of term t value v
// would be once taken again.
func (sp *spreader) skewAfter(t int, v string) int {
	return sp.counts[t][v] + 1 - sp.least[t]
}

// next returns the group whose next candidate to take, or nil when every
// remaining candidate would break a DoNotSchedule constraint.
func (sp *spreader) next() *topoGroup {
	var best *topoGroup
	bestPenalty := 0
	for _, g := range sp.groups {
		if g.head >= len(g.members) {
			continue
		}
		penalty, allowed := 0, true
		for t, term := range sp.terms {
			switch {
			case !g.has[t]:
				penalty += term.maxSkew + 1
			case term.required && sp.skewAfter(t, g.values[t]) > term.maxSkew:
				allowed = false
			default:
				penalty += max(0, sp.skewAfter(t, g.values[t])-term.maxSkew)
			}
		}
		if !allowed {
			continue
		}
		if best == nil || penalty < bestPenalty || (penalty == bestPenalty && g.ranks[g.head] < best.ranks[best.head]) {
			best, bestPenalty = g, penalty
		}
	}
	return best
}

// take takes the next candidate of g and counts its topologies.
func (sp *spreader) take(g *topoGroup) *candidate {
	c := g.members[g.head]
	g.head++
	for t := range sp.terms {
		if !g.has[t] {
			continue
		}
		v := g.values[t]
		k := sp.counts[t][v]
		sp.counts[t][v] = k + 1
		sp.atCount[t][k]--
		sp.atCount[t][k+1]++
		if k == sp.least[t] && sp.atCount[t][k] == 0 {
			sp.least[t]++
		}
	}
	return c
}

// blockingTerm names the first DoNotSchedule constraint that g breaks.
func (sp *spreader) blockingTerm(g *topoGroup) string {
	for t, term := range sp.terms {
		if term.required && g.has[t] && sp.skewAfter(t, g.values[t]) > term.maxSkew {
			return term.key
		}
	}
	return ""
}
