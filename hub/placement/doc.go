// Package placement is the hub's placement controller (shared/docs/
// contract.md, "Placement"): it schedules every Placement with the pure
// core in package scheduler and writes the result.
//
// It owns the PlacementDecisions of each Placement (named
// <placement>-decision-<n>, controlled by the Placement so that they go
// with it, labelled with the placement's name and their decision group's
// index and name) and the status of Placements: numberOfSelectedClusters,
// decisionGroups, lastScoreUpdateTime and the conditions PlacementSatisfied
// and PlacementMisconfigured.
//
// It watches Placements (spec changes), their PlacementDecisions, and what
// scheduling reads, mapping each event to the placements it can affect:
//
//   - a ManagedCluster (created, deleted, or changed in labels, annotations,
//     spec or status): the placements of the namespaces bound to a set that
//     selects the cluster, before or after the change;
//   - a ManagedClusterSet: the placements of the namespaces bound to it;
//   - a ManagedClusterSetBinding: the placements of its namespace;
//   - an AddOnPlacementScore: the placements that score by it, or whose CEL
//     may call scores().
//
// A scheduling asks to run again when a toleration or a score it relied on
// runs out, or when a score-only change held back by spec.scoreRateLimit
// is due, never by polling.
//
// Choices where the contract is silent: Balance counts the other
// placements' decisions but a change to them does not reschedule others
// (with Steady on, only new choices would differ, and they are made at the
// next scheduling anyway); a misconfigured placement keeps its decisions
// until it is fixed; a placement always has at least one PlacementDecision,
// empty when nothing is selected, as in OCM.
//
// Each reconcile lists the inputs from the manager's cache without copying
// them, runs the scheduler, writes the PlacementDecisions that differ,
// deletes those no longer wanted, then writes the Placement's status once
// as a merge patch of what changed; events follow that write.
package placement
