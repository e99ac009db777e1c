package scheduler

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
)

// DecisionSlice is one PlacementDecision to write.
type DecisionSlice struct {
	// Name is <placement>-decision-<n>, n counting from 1.
	Name string
	// GroupIndex and GroupName are the slice's decision group, for the
	// decision-group-index and decision-group-name labels.
	GroupIndex int32
	GroupName  string
	// Decisions are at most clusterv1beta1.MaxDecisionsPerPlacementDecision
	// clusters, never nil, without scores: OCM's hub records none, and
	// consumers that read every field of a decision as a string (Argo CD's
	// cluster-decision-resource generator) fail on a number.
	Decisions []clusterv1beta1.ClusterDecision
}

// Labels are the labels of the PlacementDecision of this slice.
func (d DecisionSlice) Labels(placement string) map[string]string {
	return map[string]string{
		clusterv1beta1.PlacementLabel:          placement,
		clusterv1beta1.DecisionGroupIndexLabel: strconv.Itoa(int(d.GroupIndex)),
		clusterv1beta1.DecisionGroupNameLabel:  d.GroupName,
	}
}

// DecisionName names the n-th PlacementDecision of a placement, from 1.
func DecisionName(placement string, n int) string {
	return fmt.Sprintf("%s-decision-%d", placement, n)
}

// decisionOrder sorts the decisions as spec.sortBy says: by cluster name,
// or by descending score and then name.
func decisionOrder(ds []clusterv1beta1.ClusterDecision, sortBy clusterv1beta1.SortBy) {
	slices.SortFunc(ds, func(a, b clusterv1beta1.ClusterDecision) int {
		if sortBy == clusterv1beta1.SortByScore && a.Score != b.Score {
			return cmp.Compare(b.Score, a.Score)
		}
		return strings.Compare(a.ClusterName, b.ClusterName)
	})
}

// decisionGroup is one group of decisions before it is cut into slices.
type decisionGroup struct {
	name      string
	decisions []clusterv1beta1.ClusterDecision
}

// group divides the ordered decisions into decision groups: first the
// named groups, each taking the remaining clusters its selector matches,
// then the clusters left over, unnamed; every group is cut to at most
// clustersPerDecisionGroup clusters. With no decisions there is one empty
// group, so that one empty PlacementDecision exists.
func (pl *plan) group(ds []clusterv1beta1.ClusterDecision, clusters map[string]*clusterv1.ManagedCluster) []decisionGroup {
	length, _ := groupLength(pl.perGroup, len(ds))
	var groups []decisionGroup
	taken := make([]bool, len(ds))
	for _, gs := range pl.groups {
		var matched []clusterv1beta1.ClusterDecision
		for i, d := range ds {
			if taken[i] {
				continue
			}
			c := clusters[d.ClusterName]
			if !gs.labels.Matches(labels.Set(c.Labels)) || (!gs.claims.Empty() && !gs.claims.Matches(claimLabels(c))) {
				continue
			}
			taken[i] = true
			matched = append(matched, d)
		}
		groups = append(groups, chunk(gs.name, matched, length)...)
	}
	var rest []clusterv1beta1.ClusterDecision
	for i, d := range ds {
		if !taken[i] {
			rest = append(rest, d)
		}
	}
	groups = append(groups, chunk("", rest, length)...)
	if len(groups) == 0 {
		groups = []decisionGroup{{}}
	}
	return groups
}

func chunk(name string, ds []clusterv1beta1.ClusterDecision, length int) []decisionGroup {
	var out []decisionGroup
	for len(ds) > 0 {
		n := min(length, len(ds))
		out = append(out, decisionGroup{name: name, decisions: ds[:n:n]})
		ds = ds[n:]
	}
	return out
}

// slices cuts the groups into PlacementDecisions of at most 100 decisions,
// numbered across groups, and returns them with status.decisionGroups.
func slicesOf(placement string, groups []decisionGroup) ([]DecisionSlice, []clusterv1beta1.DecisionGroupStatus) {
	var out []DecisionSlice
	var status []clusterv1beta1.DecisionGroupStatus
	for gi, g := range groups {
		gs := clusterv1beta1.DecisionGroupStatus{
			DecisionGroupIndex: int32(gi),
			DecisionGroupName:  g.name,
			ClustersCount:      int32(len(g.decisions)),
		}
		ds := g.decisions
		for first := true; first || len(ds) > 0; first = false {
			n := min(clusterv1beta1.MaxDecisionsPerPlacementDecision, len(ds))
			slice := DecisionSlice{
				Name:       DecisionName(placement, len(out)+1),
				GroupIndex: int32(gi),
				GroupName:  g.name,
				Decisions:  withoutScores(ds[:n]),
			}
			out = append(out, slice)
			gs.Decisions = append(gs.Decisions, slice.Name)
			ds = ds[n:]
		}
		status = append(status, gs)
	}
	return out, status
}

// withoutScores copies decisions, leaving their scores out.
func withoutScores(ds []clusterv1beta1.ClusterDecision) []clusterv1beta1.ClusterDecision {
	out := make([]clusterv1beta1.ClusterDecision, len(ds))
	for i, d := range ds {
		out[i] = clusterv1beta1.ClusterDecision{ClusterName: d.ClusterName, Reason: d.Reason}
	}
	return out
}
