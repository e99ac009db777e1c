package policy

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	"github.com/flotilla-io/flotilla/hub/failover"
)

// keepForFailover takes out of leaving (the copies of clusters no longer
// chosen, by namespace) those that stay, by the replica sets' rule
// (failover.Keep): a cluster the hub tainted for health keeps its copy,
// and so its compliance history, until a replacement's copy has reported
// its compliance or, without one, for the Placements' failover grace; a
// cluster back from an outage keeps it until the Placements have decided
// since. Kept copies are not written. The duration is when to look again,
// 0 if never.
func (r *Reconciler) keepForFailover(ctx context.Context, s *scope, leaving map[string]*policyv1.Policy) (time.Duration, error) {
	if len(leaving) == 0 || s.root.Spec.Disabled || nameTooLong(s.root) || len(s.placements) == 0 {
		// Unbound or disabled: the copies go, whatever the clusters' health.
		return 0, nil
	}
	logger := klog.FromContext(ctx)
	var leavers []failover.Leaver
	var next time.Duration
	for _, c := range slices.Sorted(maps.Keys(leaving)) {
		mc := &clusterv1.ManagedCluster{}
		if err := r.Client.Get(ctx, client.ObjectKey{Name: c}, mc); client.IgnoreNotFound(err) != nil {
			return 0, fmt.Errorf("get ManagedCluster %s: %w", c, err)
		}
		if wait := failover.ReturnWait(mc, s.decided, time.Now()); wait > 0 {
			logger.V(1).Info("Keeping the replicated policy of a cluster back from an outage until its Placement decides again",
				"policy", klog.KObj(s.root), "cluster", c, "atMost", wait)
			delete(leaving, c)
			if next == 0 || wait < next {
				next = wait
			}
			continue
		}
		l := failover.Leaver{Cluster: c, Grace: s.grace}
		l.Taint, l.Since = failover.HealthTaint(mc)
		leavers = append(leavers, l)
	}
	candidates := make([]failover.Candidate, 0, len(s.clusters))
	for _, c := range s.clusters {
		cand := failover.Candidate{Cluster: c}
		if cp := s.copies[c]; cp != nil {
			cand.Created, cand.Ready = cp.CreationTimestamp.Time, cp.Status.ComplianceState != ""
		}
		candidates = append(candidates, cand)
	}
	now := time.Now()
	kept, graceEnds := failover.Keep(leavers, candidates, now)
	for c, k := range kept {
		logger.V(1).Info("Keeping the replicated policy of a cluster the hub tainted for its health",
			"policy", klog.KObj(s.root), "cluster", c, "taint", k.Taint, "replacement", k.Replacement, "until", k.Until)
		delete(leaving, c)
	}
	if !graceEnds.IsZero() {
		// Timestamps have whole seconds: look again just after the end.
		if wait := graceEnds.Sub(now) + time.Second; next == 0 || wait < next {
			next = wait
		}
	}
	return next, nil
}
