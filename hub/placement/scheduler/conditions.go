package scheduler

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
)

// stats counts what happened to the clusters on the way, for the
// PlacementSatisfied message.
type stats struct {
	namespace string
	// requested is spec.clusterSets; bound are the sets bound to the
	// namespace; eligible those of them the placement may use.
	requested, bound, eligible []string
	// badSets are eligible sets whose selector is invalid, with the error.
	badSets []string
	inSets  int
	noMatch int
	// rejected[i][part] counts the clusters that predicate i rejected by that part.
	rejected [][len(partNames)]int
	// celErrors counts clusters for which a CEL expression failed; celErr is the first failure.
	celErrors int
	celErr    error
	// taints counts the clusters each untolerated taint excluded.
	taints     map[string]int
	noTopology map[string]int
	blocked    map[string]int
	feasible   int
	selected   int
	number     *int32
}

func newStats(p *clusterv1beta1.Placement) *stats {
	return &stats{namespace: p.Namespace, requested: p.Spec.ClusterSets, number: p.Spec.NumberOfClusters, taints: map[string]int{}}
}

// taintName shows a taint as kubectl does: key[=value]:Effect.
func taintName(t clusterv1.Taint) string {
	if t.Value != "" {
		return t.Key + "=" + t.Value + ":" + string(t.Effect)
	}
	return t.Key + ":" + string(t.Effect)
}

// unscheduled is how many requested clusters could not be selected.
func (st *stats) unscheduled() int {
	if st.number != nil {
		return max(0, int(*st.number)-st.selected)
	}
	return st.feasible - st.selected
}

// satisfiedCondition is PlacementSatisfied. Its message says, when fewer
// clusters were selected than asked for, where the others went.
func satisfiedCondition(st *stats, generation int64) metav1.Condition {
	c := metav1.Condition{Type: clusterv1beta1.PlacementConditionSatisfied, Status: metav1.ConditionFalse, ObservedGeneration: generation}
	switch {
	case len(st.bound) == 0:
		c.Reason = clusterv1beta1.ReasonNoManagedClusterSetBindings
		c.Message = fmt.Sprintf("No ManagedClusterSetBinding in namespace %s binds an existing ManagedClusterSet: "+
			"bind one, e.g. `flotilla clusterset bind default --namespace %s`", st.namespace, st.namespace)
	case len(st.eligible) == 0:
		c.Reason = clusterv1beta1.ReasonNoIntersection
		c.Message = fmt.Sprintf("None of the ManagedClusterSets [%s] in spec.clusterSets is bound to namespace %s (bound: [%s])",
			strings.Join(st.requested, ", "), st.namespace, strings.Join(st.bound, ", "))
	case st.inSets == 0:
		c.Reason = clusterv1beta1.ReasonAllManagedClusterSetsEmpty
		c.Message = fmt.Sprintf("The ManagedClusterSets [%s] have no member ManagedCluster%s", strings.Join(st.eligible, ", "), st.badSetsNote())
	case st.feasible == 0:
		c.Reason = clusterv1beta1.ReasonNoManagedClusterMatched
		c.Message = "No ManagedCluster qualifies: " + st.breakdown()
	case st.unscheduled() > 0:
		c.Reason = clusterv1beta1.ReasonNotAllDecisionsScheduled
		want := st.feasible
		if st.number != nil {
			want = int(*st.number)
		}
		c.Message = fmt.Sprintf("%d of %d requested clusters selected: %s", st.selected, want, st.breakdown())
	default:
		c.Status, c.Reason = metav1.ConditionTrue, clusterv1beta1.ReasonAllDecisionsScheduled
		if st.number != nil {
			c.Message = fmt.Sprintf("All %d requested clusters selected", *st.number)
		} else {
			c.Message = fmt.Sprintf("All %d clusters that qualify selected", st.selected)
		}
	}
	return c
}

// breakdown says what happened to the members of the eligible sets.
func (st *stats) breakdown() string {
	parts := []string{fmt.Sprintf("of the %d clusters in ManagedClusterSets [%s], %d qualify",
		st.inSets, strings.Join(st.eligible, ", "), st.feasible)}
	if st.noMatch > 0 {
		p := fmt.Sprintf("%d match no predicate", st.noMatch)
		var byPredicate []string
		for i, parts := range st.rejected {
			var by []string
			for part, n := range parts {
				if n > 0 {
					by = append(by, fmt.Sprintf("%d by %s", n, partNames[part]))
				}
			}
			byPredicate = append(byPredicate, fmt.Sprintf("predicate %d rejects %s", i+1, strings.Join(by, ", ")))
		}
		p += " (" + strings.Join(byPredicate, "; ") + ")"
		if st.celErrors > 0 {
			p += fmt.Sprintf(" (CEL evaluation failed on %d, e.g. %v)", st.celErrors, st.celErr)
		}
		parts = append(parts, p)
	}
	if len(st.taints) > 0 {
		var ts []string
		total := 0
		for _, name := range slices.Sorted(maps.Keys(st.taints)) {
			ts = append(ts, fmt.Sprintf("%s on %d", name, st.taints[name]))
			total += st.taints[name]
		}
		parts = append(parts, fmt.Sprintf("%d have taints the placement does not tolerate (%s)", total, strings.Join(ts, ", ")))
	}
	for _, key := range slices.Sorted(maps.Keys(st.noTopology)) {
		parts = append(parts, fmt.Sprintf("%d lack the topology key %s of a DoNotSchedule spread constraint", st.noTopology[key], key))
	}
	for _, key := range slices.Sorted(maps.Keys(st.blocked)) {
		parts = append(parts, fmt.Sprintf("%d were left out to keep the DoNotSchedule spread constraint on %s within its maxSkew", st.blocked[key], key))
	}
	return strings.Join(parts, "; ") + st.badSetsNote()
}

func (st *stats) badSetsNote() string {
	if len(st.badSets) == 0 {
		return ""
	}
	return "; invalid sets ignored: " + strings.Join(st.badSets, "; ")
}

// misconfiguredCondition is PlacementMisconfigured: True with what to fix
// when err is set.
func misconfiguredCondition(err error, generation int64) metav1.Condition {
	if err != nil {
		return metav1.Condition{
			Type: clusterv1beta1.PlacementConditionMisconfigured, Status: metav1.ConditionTrue,
			Reason:             clusterv1beta1.ReasonMisconfigured,
			Message:            "The spec cannot be evaluated; the decisions stay as they were until it is fixed: " + strings.ReplaceAll(err.Error(), "\n", "; "),
			ObservedGeneration: generation,
		}
	}
	return metav1.Condition{
		Type: clusterv1beta1.PlacementConditionMisconfigured, Status: metav1.ConditionFalse,
		Reason: clusterv1beta1.ReasonSucceedconfigured, Message: "Placement configurations check pass",
		ObservedGeneration: generation,
	}
}
