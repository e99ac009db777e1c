package console

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/hub/clusterset"
	"github.com/flotilla-io/flotilla/hub/placement/scheduler"
)

// whyNotChosen asks the hub's own scheduler about mc alone: the reason
// it gives for choosing nothing is why mc is not chosen. A cluster it
// would choose alone qualifies, and lost to the others on count or score.
// The scheduler's reason counts clusters; the console then names what
// rejected this one: the cluster sets, the predicate and its part, or the
// taint.
func whyNotChosen(in scheduler.Input, mc *clusterv1.ManagedCluster) string {
	in.Clusters = []*clusterv1.ManagedCluster{mc}
	res := scheduler.Schedule(in)
	if res.Misconfigured != nil {
		return "the placement is misconfigured: " + res.Misconfigured.Error()
	}
	if len(res.Decisions) > 0 {
		if n := in.Placement.Spec.NumberOfClusters; n != nil {
			return fmt.Sprintf("qualifies, but numberOfClusters (%d) were chosen before it, by score or because decisions are kept stable", *n)
		}
		return "qualifies; the hub has not scheduled the placement since it did"
	}
	c := meta.FindStatusCondition(res.Conditions, clusterv1beta1.PlacementConditionSatisfied)
	if c == nil {
		return "not chosen"
	}
	switch c.Reason {
	case clusterv1beta1.ReasonAllManagedClusterSetsEmpty:
		return notInSets(in, mc)
	case clusterv1beta1.ReasonNoManagedClusterMatched:
		if why := rejectedBy(in, mc); why != "" {
			return why
		}
		return "does not qualify: " + strings.TrimPrefix(c.Message, "No ManagedCluster qualifies: ")
	}
	return c.Message
}

// notInSets names the sets the placement may use, with the selector by
// which each picks its members, and the sets mc is in.
func notInSets(in scheduler.Input, mc *clusterv1.ManagedCluster) string {
	if !mc.DeletionTimestamp.IsZero() {
		return "the cluster is being deleted"
	}
	p := in.Placement
	var eligible, member []string
	for _, set := range in.ClusterSets {
		sel, err := clusterset.Selector(set)
		if err != nil {
			continue
		}
		if sel.Matches(labels.Set(mc.Labels)) {
			member = append(member, set.Name)
		}
		if !set.DeletionTimestamp.IsZero() || !bound(in, set.Name) || (len(p.Spec.ClusterSets) > 0 && !slices.Contains(p.Spec.ClusterSets, set.Name)) {
			continue
		}
		eligible = append(eligible, fmt.Sprintf("ManagedClusterSet %s (members: %s)", set.Name, sel))
	}
	slices.Sort(eligible)
	slices.Sort(member)
	where := "bound to namespace " + p.Namespace
	if len(p.Spec.ClusterSets) > 0 {
		where += " and named in spec.clusterSets"
	}
	in2 := "no cluster set"
	if len(member) > 0 {
		in2 = strings.Join(member, ", ")
	}
	return fmt.Sprintf("not in a cluster set the placement may use (%s): %s; the cluster is in %s", where, strings.Join(eligible, "; "), in2)
}

// bound says whether a binding in the placement's namespace binds set.
func bound(in scheduler.Input, set string) bool {
	for _, b := range in.Bindings {
		if b.Namespace == in.Placement.Namespace && b.Name == set && b.Spec.ClusterSet == set {
			return true
		}
	}
	return false
}

// rejectedBy names the part of each predicate, or the taint, that keeps
// mc out, by scheduling variants of the placement on mc alone: so the
// hub's scheduler decides what matches, and the console only says which
// variant failed. "" when neither explains it (a spread constraint does).
func rejectedBy(in scheduler.Input, mc *clusterv1.ManagedCluster) string {
	preds := in.Placement.Spec.Predicates
	if len(preds) > 0 && !qualifies(in, mc, preds, true) {
		var why []string
		for i, pred := range preds {
			why = append(why, fmt.Sprintf("predicate %d: %s", i+1, predicateRejection(in, mc, pred.RequiredClusterSelector)))
		}
		return "matches no predicate (" + strings.Join(why, "; ") + ")"
	}
	for _, t := range mc.Spec.Taints {
		one := mc.DeepCopy()
		one.Spec.Taints = []clusterv1.Taint{t}
		if !qualifies(in, one, preds, false) {
			return fmt.Sprintf("has the taint %s, which spec.tolerations do not tolerate", taintText(t))
		}
	}
	return ""
}

// predicateRejection says which part of one predicate rejects mc, and
// what the cluster has instead.
func predicateRejection(in scheduler.Input, mc *clusterv1.ManagedCluster, sel clusterv1beta1.ClusterSelector) string {
	only := func(s clusterv1beta1.ClusterSelector) []clusterv1beta1.ClusterPredicate {
		return []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: s}}
	}
	ls := clusterv1beta1.ClusterSelector{LabelSelector: sel.LabelSelector}
	if !qualifies(in, mc, only(ls), true) {
		return fmt.Sprintf("labelSelector %s rejects it (the cluster has %s)", metav1.FormatLabelSelector(&sel.LabelSelector), has(mc.Labels, &sel.LabelSelector, "label"))
	}
	ls.ClaimSelector = sel.ClaimSelector
	if !qualifies(in, mc, only(ls), true) {
		claims := map[string]string{}
		for _, c := range mc.Status.ClusterClaims {
			claims[c.Name] = c.Value
		}
		cs := &metav1.LabelSelector{MatchExpressions: sel.ClaimSelector.MatchExpressions}
		return fmt.Sprintf("claimSelector %s rejects it (the cluster has %s)", metav1.FormatLabelSelector(cs), has(claims, cs, "claim"))
	}
	for _, expr := range sel.CelSelector.CelExpressions {
		ls.CelSelector.CelExpressions = []string{expr}
		if !qualifies(in, mc, only(ls), true) {
			return fmt.Sprintf("celSelector expression %q is false for it (or fails)", expr)
		}
	}
	return "its parts match one by one, but not together"
}

// qualifies says whether the scheduler would choose mc alone for the
// placement with the predicates preds; with tolerateAll its taints are
// tolerated. Count, spread and scores play no part.
func qualifies(in scheduler.Input, mc *clusterv1.ManagedCluster, preds []clusterv1beta1.ClusterPredicate, tolerateAll bool) bool {
	p := in.Placement.DeepCopy()
	p.Spec.Predicates = preds
	p.Spec.NumberOfClusters = nil
	p.Spec.SpreadPolicy = clusterv1beta1.SpreadPolicy{}
	if tolerateAll {
		p.Spec.Tolerations = []clusterv1beta1.Toleration{{Operator: clusterv1beta1.TolerationOpExists}}
	}
	in.Placement, in.Clusters = p, []*clusterv1.ManagedCluster{mc}
	return len(scheduler.Schedule(in).Decisions) > 0
}

// has shows the values a cluster has for the keys a selector asks about,
// e.g. `env=dev, no label region`.
func has(values map[string]string, sel *metav1.LabelSelector, what string) string {
	keys := map[string]bool{}
	for k := range sel.MatchLabels {
		keys[k] = true
	}
	for _, r := range sel.MatchExpressions {
		keys[r.Key] = true
	}
	var out []string
	for _, k := range sortedKeys(keys) {
		if v, ok := values[k]; ok {
			out = append(out, k+"="+v)
		} else {
			out = append(out, "no "+what+" "+k)
		}
	}
	return strings.Join(out, ", ")
}

// taintText shows a taint as kubectl does: key[=value]:Effect.
func taintText(t clusterv1.Taint) string {
	if t.Value != "" {
		return t.Key + "=" + t.Value + ":" + string(t.Effect)
	}
	return t.Key + ":" + string(t.Effect)
}
