package scheduler

import (
	"slices"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	"github.com/flotilla-io/flotilla/hub/clusterset"
)

// Input is everything one scheduling of a Placement depends on. Schedule
// only reads it.
type Input struct {
	// Placement is the placement to schedule.
	Placement *clusterv1beta1.Placement
	// Bindings are the ManagedClusterSetBindings of the placement's
	// namespace; those of other namespaces are ignored.
	Bindings []*clusterv1beta2.ManagedClusterSetBinding
	// ClusterSets are the ManagedClusterSets of the hub.
	ClusterSets []*clusterv1beta2.ManagedClusterSet
	// Clusters are the ManagedClusters of the hub.
	Clusters []*clusterv1.ManagedCluster
	// Scores are the AddOnPlacementScores by cluster (their namespace) and
	// name; needed only when Requirements says so.
	Scores map[string]map[string]*clusterv1alpha1.AddOnPlacementScore
	// DecisionCounts counts, per cluster, the other placements whose
	// decisions hold it (for Balance); needed only when Requirements says so.
	DecisionCounts map[string]int
	// Previous are the clusters of the placement's current decisions; nil
	// before the first scheduling. Decisions record no scores, so a change
	// of scores alone is no change to them.
	Previous sets.Set[string]
	// Now is the time at which tolerationSeconds, score validity and the
	// score rate limit are judged.
	Now time.Time
}

// Result is the outcome of one scheduling.
type Result struct {
	// Misconfigured, when set, says why the spec cannot be evaluated. The
	// placement's decisions and status are then to be kept as they are,
	// apart from Conditions.
	Misconfigured error
	// Decisions are the selected clusters, ordered as spec.sortBy says.
	Decisions []clusterv1beta1.ClusterDecision
	// PlacementDecisions are the PlacementDecisions to keep, in order; at
	// least one.
	PlacementDecisions []DecisionSlice
	// DecisionGroups is status.decisionGroups.
	DecisionGroups []clusterv1beta1.DecisionGroupStatus
	// Conditions are PlacementMisconfigured and, unless Misconfigured is
	// set, PlacementSatisfied.
	Conditions []metav1.Condition
	// LastScoreUpdateTime is status.lastScoreUpdateTime.
	LastScoreUpdateTime *metav1.Time
	// RequeueAfter is when to schedule again though nothing else changes:
	// a toleration or an AddOnPlacementScore runs out, or a score update
	// held back by spec.scoreRateLimit is due. Zero means never.
	RequeueAfter time.Duration
}

// Requirements says which optional inputs scheduling p reads, so that
// callers gather only those.
type Requirements struct {
	// DecisionCounts: the Balance prioritizer is on.
	DecisionCounts bool
	// Scores: an AddOn prioritizer is on, or a CEL expression may call scores().
	Scores bool
}

// RequirementsOf returns what scheduling p needs besides clusters, sets and
// bindings. A spec that does not compile needs nothing.
func RequirementsOf(p *clusterv1beta1.Placement) Requirements {
	pl, err := compile(p)
	if err != nil {
		return Requirements{}
	}
	var r Requirements
	for _, pr := range pl.prioritizers {
		r.DecisionCounts = r.DecisionCounts || pr.builtIn == clusterv1beta1.PrioritizerBalance
		r.Scores = r.Scores || pr.addOn != nil
	}
	for _, pred := range pl.predicates {
		for _, prg := range pred.cel {
			r.Scores = r.Scores || usesScores(prg.expr)
		}
	}
	return r
}

// Schedule chooses the clusters of in.Placement. It is a pure function of
// its input: the same input gives the same result.
func Schedule(in Input) Result {
	p := in.Placement
	pl, err := compile(p)
	if err != nil {
		return Result{Misconfigured: err, Conditions: []metav1.Condition{misconfiguredCondition(err, p.Generation)}}
	}
	st := newStats(p)
	var cands []*candidate
	var changesAt time.Time
	for _, c := range members(&in, st) {
		m := pl.match(c, in.Scores[c.Name], in.Now)
		if !m.ok {
			st.noMatch++
			if st.rejected == nil {
				st.rejected = make([][len(partNames)]int, len(pl.predicates))
			}
			for i, part := range m.rejectedBy {
				st.rejected[i][part]++
			}
			if m.celErr != nil {
				if st.celErrors == 0 {
					st.celErr = m.celErr
				}
				st.celErrors++
			}
			continue
		}
		_, chosen := in.Previous[c.Name]
		v := checkTaints(c.Spec.Taints, pl.tolerations, chosen, in.Now)
		changesAt = earliest(changesAt, v.changesAt)
		if v.excludedBy != nil {
			st.taints[taintName(*v.excludedBy)]++
			continue
		}
		cands = append(cands, &candidate{cluster: c, chosen: chosen, avoid: v.avoid, predicate: m.index})
	}
	st.feasible = len(cands)
	changesAt = earliest(changesAt, pl.score(cands, &in))

	res := Result{LastScoreUpdateTime: p.Status.LastScoreUpdateTime}
	decisions, retryAt := pl.choose(cands, &in, st, &res)
	changesAt = earliest(changesAt, retryAt)
	st.selected = len(decisions)
	decisionOrder(decisions, pl.sortBy)
	res.Decisions = decisions

	byName := make(map[string]*clusterv1.ManagedCluster, len(cands))
	for _, c := range cands {
		byName[c.cluster.Name] = c.cluster
	}
	res.PlacementDecisions, res.DecisionGroups = slicesOf(p.Name, pl.group(decisions, byName))
	res.Conditions = []metav1.Condition{misconfiguredCondition(nil, p.Generation), satisfiedCondition(st, p.Generation)}
	if !changesAt.IsZero() {
		res.RequeueAfter = max(changesAt.Sub(in.Now), time.Second)
	}
	return res
}

// choose picks the clusters and their scores. A chosen cluster stays while
// it qualifies when Steady is on (its weight is positive); otherwise the
// best-scored clusters win. Either way, a swap for better-scored clusters
// is made at most once per spec.scoreRateLimit: until then the current
// clusters stay, and retryAt says when to look again. New score values
// that choose the same clusters change no decision (decisions record no
// scores), only their order when spec.sortBy is Score.
func (pl *plan) choose(cands []*candidate, in *Input, st *stats, res *Result) (decisions []clusterv1beta1.ClusterDecision, retryAt time.Time) {
	n := len(cands)
	if pl.number != nil {
		n = int(*pl.number)
	}
	sticky := pl.pick(rank(cands, true), n)
	picked := sticky
	if !pl.steady {
		picked = pl.pick(rank(cands, false), n)
	}
	fresh := toDecisions(picked.selected)
	changed := !sameMembers(picked.selected, in.Previous)
	last := res.LastScoreUpdateTime
	if changed && in.Previous != nil && sameMembers(sticky.selected, in.Previous) &&
		last != nil && in.Now.Before(last.Add(pl.scoreRateLimit)) {
		picked, fresh = sticky, toDecisions(sticky.selected)
		changed = false
		retryAt = last.Add(pl.scoreRateLimit)
	}
	if changed && len(fresh) > 0 {
		res.LastScoreUpdateTime = &metav1.Time{Time: in.Now}
	}
	st.noTopology, st.blocked = picked.noTopology, picked.blocked
	return fresh, retryAt
}

// toDecisions turns candidates into decisions, with their scores: the
// scheduler orders by them, the PlacementDecisions leave them out
// (DecisionSlice).
func toDecisions(cands []*candidate) []clusterv1beta1.ClusterDecision {
	out := make([]clusterv1beta1.ClusterDecision, 0, len(cands))
	for _, c := range cands {
		out = append(out, clusterv1beta1.ClusterDecision{ClusterName: c.cluster.Name, Reason: reason(c), Score: c.score})
	}
	return out
}

// reason says why a cluster was selected.
func reason(c *candidate) string {
	if c.predicate < 0 {
		return "member of a bound ManagedClusterSet"
	}
	return "matches predicate " + strconv.Itoa(c.predicate+1)
}

func sameMembers(cands []*candidate, prev sets.Set[string]) bool {
	if len(cands) != len(prev) {
		return false
	}
	for _, c := range cands {
		if _, ok := prev[c.cluster.Name]; !ok {
			return false
		}
	}
	return true
}

// members returns the clusters, not being deleted, of the sets the
// placement may use: those bound to its namespace by a binding named after
// an existing set, narrowed to spec.clusterSets when given.
func members(in *Input, st *stats) []*clusterv1.ManagedCluster {
	sets := make(map[string]*clusterv1beta2.ManagedClusterSet, len(in.ClusterSets))
	for _, s := range in.ClusterSets {
		if s.DeletionTimestamp.IsZero() {
			sets[s.Name] = s
		}
	}
	for _, b := range in.Bindings {
		if b.Namespace == st.namespace && b.Name == b.Spec.ClusterSet && sets[b.Name] != nil && !slices.Contains(st.bound, b.Name) {
			st.bound = append(st.bound, b.Name)
		}
	}
	slices.Sort(st.bound)
	for _, name := range st.bound {
		if len(st.requested) == 0 || slices.Contains(st.requested, name) {
			st.eligible = append(st.eligible, name)
		}
	}
	var selectors []labels.Selector
	for _, name := range st.eligible {
		sel, err := clusterset.Selector(sets[name])
		if err != nil {
			st.badSets = append(st.badSets, err.Error())
			continue
		}
		selectors = append(selectors, sel)
	}
	var out []*clusterv1.ManagedCluster
	for _, c := range in.Clusters {
		if !c.DeletionTimestamp.IsZero() {
			continue
		}
		for _, sel := range selectors {
			if sel.Matches(labels.Set(c.Labels)) {
				out = append(out, c)
				break
			}
		}
	}
	st.inSets = len(out)
	return out
}

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}
