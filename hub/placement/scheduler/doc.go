// Package scheduler is the pure core of placement: Schedule takes a
// Placement and what it depends on (clusters, sets, bindings, scores, the
// placement's current decisions, the time) and returns the chosen
// clusters, their decision groups and PlacementDecision slices, the
// placement's conditions, and when to look again. It reads nothing else,
// writes nothing, and gives the same result for the same input, so that it
// can be unit- and property-tested and benchmarked without an API server.
//
// The steps, as in OCM:
//
//  1. Sets: the clusters (not being deleted) of the ManagedClusterSets
//     bound to the placement's namespace by a binding named after an
//     existing set, narrowed to spec.clusterSets when given.
//  2. Predicates: a cluster qualifies when any requiredClusterSelector
//     matches; within one, the labelSelector, the claimSelector (over
//     status.clusterClaims) and every CEL expression must match. CEL sees
//     the variable managedCluster (the object as JSON) and
//     managedCluster.scores(name); a failing expression counts as no match.
//  3. Taints: an untolerated NoSelect taint excludes a cluster, so does an
//     untolerated NoSelectIfNew taint unless the cluster is already chosen;
//     an untolerated PreferNoSelect taint ranks it after untainted ones. A
//     toleration with tolerationSeconds holds until timeAdded plus that
//     long; the result asks to be run again then.
//  4. Scores: each prioritizer scores clusters from -100 to 100 (Balance,
//     ResourceAllocatableCPU/Memory and AddOn scores as OCM defines them);
//     the score is the weighted sum. Additive mode starts from Balance and
//     Steady at weight 1, Exact from nothing.
//  5. Choice: with Steady on (positive weight), clusters already chosen stay
//     while they qualify, and new ones are added by rank (fewer
//     PreferNoSelect taints, higher score, then name); without it the best
//     ranked win. spreadPolicy constraints are applied while picking. A
//     change caused only by scores is made at most once per
//     spec.scoreRateLimit.
//  6. Groups: decisionStrategy.groupStrategy divides the decisions into
//     decision groups, which are cut into PlacementDecisions of at most 100
//     decisions named <placement>-decision-<n>.
//
// A spec that cannot be evaluated (an invalid selector or CEL expression,
// an unknown prioritizer) yields only a PlacementMisconfigured condition
// that names the field and the fix; the caller keeps the current decisions.
package scheduler
