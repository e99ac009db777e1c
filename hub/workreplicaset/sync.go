package workreplicaset

import (
	"context"
	"errors"
	"fmt"
	"github.com/flotilla-io/flotilla/internal/rollout"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/hub/failover"
	"github.com/flotilla-io/flotilla/hub/workreplicaset/health"
	"github.com/flotilla-io/flotilla/internal/parallel"
)

// listWorks reads the replica set's ManifestWorks, by cluster.
func (r *Reconciler) listWorks(ctx context.Context, s *scope) (ctrl.Result, error) {
	works, err := r.ownWorks(ctx, s.owner)
	if err != nil {
		return ctrl.Result{}, err
	}
	s.works = make(map[string]*workv1.ManifestWork, len(works))
	for _, w := range works {
		if w.Name == s.mwrs.Name {
			s.works[w.Namespace] = w
		}
	}
	r.written.overlay(s.owner, s.works, s.now)
	return ctrl.Result{}, nil
}

// syncWorks writes the new spec to the clusters the rollout picks now and
// deletes the works of clusters that left, but those kept for failover.
// With invalid input it writes nothing: the works stay as they are.
func (r *Reconciler) syncWorks(ctx context.Context, s *scope) (ctrl.Result, error) {
	if s.invalid != nil || s.retry {
		return ctrl.Result{}, nil
	}
	var jobs []func(context.Context) error
	var mu sync.Mutex
	var result ctrl.Result
	s.decide()
	for _, pt := range s.placements {
		for _, c := range pt.rollout.Push {
			spec, cur := s.rendered[c], s.works[c]
			jobs = append(jobs, func(ctx context.Context) error {
				w, err := r.writeWork(ctx, s, c, pt.name, spec, cur)
				ours := apierrors.IsAlreadyExists(err) && r.ownedBy(ctx, c, s.mwrs.Name, s.owner)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case apierrors.IsAlreadyExists(err) && ours:
					// Our own work, created by an earlier reconcile that the
					// cache has not caught up with yet.
					result.RequeueAfter = conflictRetry
				case apierrors.IsAlreadyExists(err):
					s.conflicts = append(s.conflicts, c)
				case apierrors.IsNotFound(err) && cur == nil:
					s.missingNamespace = append(s.missingNamespace, c)
					result.RequeueAfter = missingNamespaceRetry
				case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
					result.RequeueAfter = conflictRetry
				case err != nil:
					return err
				default:
					s.works[c] = w
					r.written.remember(s.owner, w, s.now)
				}
				return nil
			})
		}
	}
	doomed, returnWait, err := r.leaving(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	if returnWait > 0 && (result.RequeueAfter == 0 || returnWait < result.RequeueAfter) {
		result.RequeueAfter = returnWait
	}
	writeErr := errors.Join(parallel.Run(ctx, writeWorkers, jobs)...)
	slices.Sort(s.conflicts)
	slices.Sort(s.missingNamespace)
	if err := r.deleteWorks(ctx, doomed); err != nil || writeErr != nil {
		return ctrl.Result{}, errors.Join(writeErr, err)
	}
	for _, w := range doomed {
		delete(s.works, w.Namespace)
		r.written.forget(s.owner, w.Namespace)
	}
	// The status describes the state after the writes.
	s.decide()
	for _, pt := range s.placements {
		if pt.rollout.RequeueAfter > 0 && (result.RequeueAfter == 0 || pt.rollout.RequeueAfter < result.RequeueAfter) {
			result.RequeueAfter = pt.rollout.RequeueAfter
		}
	}
	return result, nil
}

// decide decides each placement's rollout step on the works as they are:
// by its strategy, held by a rollback that cannot go on, and by a pause.
func (s *scope) decide() {
	for _, pt := range s.placements {
		pt.rollout = rollout.Decide(s.states(pt), pt.strategy, s.now)
	}
	s.holdRollback()
	for _, pt := range s.placements {
		pt.rollout = pausedIf(pt.rollout, paused(s.mwrs))
	}
}

// states are the rollout states of the clusters a placement rolls out.
func (s *scope) states(pt *placementTarget) []rollout.Cluster {
	out := make([]rollout.Cluster, 0, len(pt.clusters))
	healthy := func(w *workv1.ManifestWork) bool { return s.health(w).Healthy }
	for _, c := range pt.clusters {
		spec := s.rendered[c]
		out = append(out, stateOf(c, pt.groups[c], s.works[c], &spec, healthy))
	}
	return out
}

// health checks w with the replica set's health check.
func (s *scope) health(w *workv1.ManifestWork) health.Result {
	if s.checker == nil {
		return health.Result{Healthy: true}
	}
	return s.checker.Check(s.mwrs.Spec.HealthCheck, w)
}

// writeWork creates cluster's work, or updates cur to spec.
func (r *Reconciler) writeWork(ctx context.Context, s *scope, cluster, placement string, spec workv1.ManifestWorkSpec, cur *workv1.ManifestWork) (*workv1.ManifestWork, error) {
	if cur == nil {
		w := newWork(s.mwrs, s.owner, cluster, placement, s.rendering.Name, spec, s.now)
		if err := r.Writer.Create(ctx, w); err != nil {
			return nil, fmt.Errorf("create ManifestWork %s/%s: %w", w.Namespace, w.Name, err)
		}
		return w, nil
	}
	w := updatedWork(cur, placement, s.rendering.Name, spec, s.now)
	if err := r.Writer.Update(ctx, w); err != nil {
		return nil, fmt.Errorf("update ManifestWork %s/%s: %w", w.Namespace, w.Name, err)
	}
	return w, nil
}

// leaving returns the works of clusters no longer chosen that go now, and
// records in s.kept those that stay for failover (failover.Keep: a cluster
// the hub tainted for health keeps its work until a replacement is
// Available, or without one for its Placement's failover grace). A cluster
// back from an outage keeps its work until every Placement has decided
// since it came back (at most failover.ReturnGrace): in between, its
// absence from the decisions is the outage's, not a decision, and deleting
// the work would delete and re-create its objects on the spoke. The
// duration is when to look again (a grace that ends, a cluster back), 0 if
// never.
func (r *Reconciler) leaving(ctx context.Context, s *scope) ([]*workv1.ManifestWork, time.Duration, error) {
	var (
		leavers   []failover.Leaver
		returning = map[string]time.Duration{}
	)
	decided := s.lastDecided()
	for c, w := range s.works {
		if s.chosen[c] != nil || !w.DeletionTimestamp.IsZero() {
			continue
		}
		mc := &clusterv1.ManagedCluster{}
		if err := r.Client.Get(ctx, client.ObjectKey{Name: c}, mc); client.IgnoreNotFound(err) != nil {
			return nil, 0, fmt.Errorf("get ManagedCluster %s: %w", c, err)
		}
		if wait := failover.ReturnWait(mc, decided, s.now); wait > 0 {
			returning[c] = wait
			continue
		}
		l := failover.Leaver{Cluster: c, Grace: s.graceOf(w)}
		l.Taint, l.Since = failover.HealthTaint(mc)
		leavers = append(leavers, l)
	}
	var next time.Duration
	for c, wait := range returning {
		klog.FromContext(ctx).V(1).Info("Keeping the work of a cluster back from an outage until its Placement decides again",
			"manifestWorkReplicaSet", klog.KObj(s.mwrs), "cluster", c, "atMost", wait)
		if next == 0 || wait < next {
			next = wait
		}
	}
	if len(leavers) == 0 {
		return nil, next, nil
	}
	var candidates []failover.Candidate
	for c := range s.chosen {
		cand := failover.Candidate{Cluster: c}
		if w := s.works[c]; w != nil {
			cand.Created, cand.Ready = w.CreationTimestamp.Time, isAvailable(w)
		}
		candidates = append(candidates, cand)
	}
	kept, graceEnds := failover.Keep(leavers, candidates, s.now)
	s.kept = kept
	if !graceEnds.IsZero() {
		// Timestamps have whole seconds: look again just after the end.
		wait := graceEnds.Sub(s.now) + time.Second
		if next == 0 || wait < next {
			next = wait
		}
	}
	var doomed []*workv1.ManifestWork
	for _, l := range leavers {
		if k, ok := s.kept[l.Cluster]; ok {
			klog.FromContext(ctx).V(1).Info("Keeping the work of a cluster the hub tainted for its health",
				"manifestWorkReplicaSet", klog.KObj(s.mwrs), "cluster", l.Cluster, "taint", k.Taint, "replacement", k.Replacement, "until", k.Until)
			continue
		}
		doomed = append(doomed, s.works[l.Cluster])
	}
	return doomed, next, nil
}

// graceOf is the failover grace of a leaver's work w: that of the
// Placement that rolled it out, or, when that is no longer a PlacementRef
// of the replica set, the longest of theirs (failover.DefaultGrace with
// none).
func (s *scope) graceOf(w *workv1.ManifestWork) time.Duration {
	longest, some := time.Duration(0), false
	for _, pt := range s.placements {
		if pt.name == w.Labels[workv1.ManifestWorkReplicaSetPlacementNameLabel] {
			return pt.grace
		}
		longest, some = max(longest, pt.grace), true
	}
	if !some {
		return failover.DefaultGrace
	}
	return longest
}

// lastDecided is when the replica set's Placements last wrote their
// decisions, the oldest of those times: the last write to any of a
// Placement's PlacementDecisions, by their managed fields (zero when
// unknown, which counts as long ago).
func (s *scope) lastDecided() time.Time {
	var oldest time.Time
	for i, pt := range s.placements {
		if i == 0 || pt.decidedAt.Before(oldest) {
			oldest = pt.decidedAt
		}
	}
	return oldest
}

// ownedBy says whether the work name in cluster's namespace, which a
// create found to exist, is the replica set's. It asks the API server: the
// cache either lags behind (ours) or never holds it (someone else's).
func (r *Reconciler) ownedBy(ctx context.Context, cluster, name, owner string) bool {
	w := &workv1.ManifestWork{}
	if err := r.Writer.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, w); err != nil {
		// Gone again, or unreadable: try again rather than report a conflict.
		return true
	}
	return w.Labels[workv1.ManifestWorkReplicaSetLabel] == owner
}
