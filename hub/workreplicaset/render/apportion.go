package render

import (
	"fmt"
	"math/big"
	"sort"
)

// unlimited marks a share without a maximum.
const unlimited = -1

// share is one cluster's claim in a division.
type share struct {
	name   string
	weight *big.Int // never negative
	min    int64
	max    int64 // unlimited, or at least min
}

// apportion splits total across the shares in proportion to their weights,
// keeping each within [min, max], and returns the counts in the order of
// shares. A share of weight 0 takes only its min: weight 0 means "no share
// of what is left", so it never absorbs replicas the others cannot take.
//
// The counts are the exact proportional split clamped to the limits (the
// water level λ with Σ clamp(λ·wᵢ, minᵢ, maxᵢ) = total, computed with exact
// rationals), rounded by largest remainder. Ties go to the name that sorts
// first, so the same input always yields the same counts and a change to one
// cluster moves as few replicas as possible.
func apportion(total int64, shares []share) ([]int64, error) {
	if err := feasible(total, shares); err != nil {
		return nil, err
	}
	out := make([]int64, len(shares))
	sumMin := int64(0)
	for i, s := range shares {
		out[i] = s.min
		sumMin += s.min
	}
	if total == sumMin {
		return out, nil
	}
	level := waterLevel(big.NewRat(total, 1), shares)

	// Floor every exact share, then hand the replicas the floors leave out
	// to the largest fractions. An exact share strictly below its max has a
	// floor at most max-1, so the extra replica never breaks a limit.
	fracs := make([]*big.Rat, len(shares))
	left := total
	for i, s := range shares {
		exact := clampedShare(level, s)
		floor := new(big.Int).Quo(exact.Num(), exact.Denom())
		out[i] = floor.Int64()
		fracs[i] = new(big.Rat).Sub(exact, new(big.Rat).SetInt(floor))
		left -= out[i]
	}
	order := make([]int, len(shares))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		if c := fracs[order[a]].Cmp(fracs[order[b]]); c != 0 {
			return c > 0
		}
		return shares[order[a]].name < shares[order[b]].name
	})
	if left < 0 || left > int64(len(order)) {
		return nil, fmt.Errorf("internal error: rounding left %d replicas for %d clusters", left, len(order))
	}
	for _, i := range order[:left] {
		if fracs[i].Sign() == 0 {
			return nil, fmt.Errorf("internal error: %d replicas left over with no fractional share to take them", left)
		}
		out[i]++
	}
	return out, nil
}

// feasible says why no division of total can satisfy the shares' limits,
// with the numbers, or returns nil.
func feasible(total int64, shares []share) error {
	if total < 0 {
		return fmt.Errorf("cannot divide %d replicas: the total must not be negative", total)
	}
	var sumMin, sumMax int64
	bounded, anyWeight := true, false
	for _, s := range shares {
		if s.max != unlimited && s.min > s.max {
			return fmt.Errorf("cluster %s: minReplicas %d exceeds maxReplicas %d — make minReplicas at most maxReplicas", s.name, s.min, s.max)
		}
		sumMin += s.min
		switch {
		case s.weight.Sign() == 0:
			sumMax += s.min
		case s.max == unlimited:
			anyWeight, bounded = true, false
		default:
			anyWeight = true
			sumMax += s.max
		}
	}
	n := len(shares)
	switch {
	case sumMin > total:
		return fmt.Errorf("cannot divide %d replicas across %d clusters: their minReplicas add up to %d, more than %d — lower minReplicas or raise totalReplicas", total, n, sumMin, total)
	case total > sumMin && !anyWeight:
		return fmt.Errorf("cannot divide %d replicas across %d clusters: every cluster weighs 0, so the %d replicas beyond their minReplicas (%d) have nowhere to go — give some cluster a weight above 0", total, n, total-sumMin, sumMin)
	case bounded && sumMax < total:
		return fmt.Errorf("cannot divide %d replicas across %d clusters: their maxReplicas add up to %d, fewer than %d (a cluster of weight 0 takes only its minReplicas) — raise maxReplicas, add clusters or lower totalReplicas", total, n, sumMax, total)
	}
	return nil
}

// clampedShare is a share's exact (fractional) count at water level λ.
func clampedShare(level *big.Rat, s share) *big.Rat {
	lo := big.NewRat(s.min, 1)
	if s.weight.Sign() == 0 {
		return lo
	}
	v := new(big.Rat).Mul(level, new(big.Rat).SetInt(s.weight))
	if v.Cmp(lo) < 0 {
		return lo
	}
	if s.max != unlimited {
		if hi := big.NewRat(s.max, 1); v.Cmp(hi) > 0 {
			return hi
		}
	}
	return v
}

// filled is Σ clampedShare at level λ: nondecreasing and piecewise linear in λ.
func filled(level *big.Rat, shares []share) *big.Rat {
	sum := new(big.Rat)
	for _, s := range shares {
		sum.Add(sum, clampedShare(level, s))
	}
	return sum
}

// waterLevel finds λ with filled(λ) = total, for a feasible total above the
// sum of mins. filled bends only where a share reaches its min (min/w) or
// its max (max/w), so it searches those points for the last one not past
// the total and solves the straight piece after it.
func waterLevel(total *big.Rat, shares []share) *big.Rat {
	points := []*big.Rat{new(big.Rat)}
	for _, s := range shares {
		if s.weight.Sign() == 0 {
			continue
		}
		points = append(points, new(big.Rat).SetFrac(big.NewInt(s.min), s.weight))
		if s.max != unlimited {
			points = append(points, new(big.Rat).SetFrac(big.NewInt(s.max), s.weight))
		}
	}
	sort.Slice(points, func(a, b int) bool { return points[a].Cmp(points[b]) < 0 })
	// filled(points[0]) is the sum of mins, below the total, so k >= 0.
	k := sort.Search(len(points), func(i int) bool { return filled(points[i], shares).Cmp(total) > 0 }) - 1
	base := points[k]
	at := filled(base, shares)
	if at.Cmp(total) == 0 {
		return base
	}
	// Past base, the shares strictly between their min and max grow at
	// their weight; feasibility guarantees there is at least one.
	free := new(big.Int)
	for _, s := range shares {
		if s.weight.Sign() == 0 {
			continue
		}
		w := new(big.Rat).SetInt(s.weight)
		atMin := new(big.Rat).Mul(base, w).Cmp(big.NewRat(s.min, 1)) >= 0
		belowMax := s.max == unlimited || new(big.Rat).Mul(base, w).Cmp(big.NewRat(s.max, 1)) < 0
		if atMin && belowMax {
			free.Add(free, s.weight)
		}
	}
	step := new(big.Rat).Sub(total, at)
	step.Quo(step, new(big.Rat).SetInt(free))
	return step.Add(step, base)
}
