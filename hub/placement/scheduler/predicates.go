package scheduler

import (
	"time"

	"k8s.io/apimachinery/pkg/labels"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

// claimLabels returns a cluster's status.clusterClaims as a label set, for
// claim selectors and claim topology keys.
func claimLabels(c *clusterv1.ManagedCluster) labels.Set {
	set := make(labels.Set, len(c.Status.ClusterClaims))
	for _, claim := range c.Status.ClusterClaims {
		set[claim.Name] = claim.Value
	}
	return set
}

// The parts of a requiredClusterSelector, in the order they are checked.
const (
	partLabels = iota
	partClaims
	partCEL
)

var partNames = [...]string{"labelSelector", "claimSelector", "celSelector"}

// matchResult is what the predicates say about one cluster.
type matchResult struct {
	// index is the first predicate that matches; -1 when none was given.
	index int
	ok    bool
	// rejectedBy, when no predicate matches, holds for each predicate the
	// part that rejected the cluster first.
	rejectedBy []int
	// celErr is the first CEL evaluation error, which counts as no match.
	celErr error
}

// match evaluates the predicates, ORed, against one cluster. Without
// predicates every cluster matches. CEL expressions are evaluated only
// when the labels and claims of their predicate match.
func (pl *plan) match(c *clusterv1.ManagedCluster, scores map[string]*clusterv1alpha1.AddOnPlacementScore, now time.Time) matchResult {
	if len(pl.predicates) == 0 {
		return matchResult{index: -1, ok: true}
	}
	res := matchResult{rejectedBy: make([]int, 0, len(pl.predicates))}
	var claims labels.Set
	var cc *celCluster
	for i, p := range pl.predicates {
		if !p.labels.Matches(labels.Set(c.Labels)) {
			res.rejectedBy = append(res.rejectedBy, partLabels)
			continue
		}
		if !p.claims.Empty() {
			if claims == nil {
				claims = claimLabels(c)
			}
			if !p.claims.Matches(claims) {
				res.rejectedBy = append(res.rejectedBy, partClaims)
				continue
			}
		}
		ok := true
		for _, prg := range p.cel {
			if cc == nil {
				var err error
				if cc, err = newCELCluster(c, scores, now); err != nil {
					res.celErr = err
					ok = false
					break
				}
			}
			matched, err := prg.eval(cc)
			if err != nil && res.celErr == nil {
				res.celErr = err
			}
			if !matched {
				ok = false
				break
			}
		}
		if ok {
			return matchResult{index: i, ok: true}
		}
		res.rejectedBy = append(res.rejectedBy, partCEL)
	}
	return res
}
