package work

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// evictor removes the AppliedManifestWorks, and so what they applied, of
// works that are gone from the hub: this agent's records whose
// ManifestWork the hub says does not exist, and records of this agent and
// cluster for another hub (the cluster moved). It marks each with
// status.evictionStartTime, and deletes it once the grace period passed
// and the hub still says so. It decides only on answers from the hub:
// an unreachable hub evicts nothing.
type evictor struct {
	r     *reconciler
	cache cache.Cache
}

// Start sweeps until ctx ends, once the hub's ManifestWorks are cached.
func (e *evictor) Start(ctx context.Context) error {
	if !e.cache.WaitForCacheSync(ctx) {
		return nil
	}
	interval := min(max(e.r.cfg.EvictionGracePeriod/4, time.Second), time.Minute)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := e.sweep(ctx); err != nil && ctx.Err() == nil {
			klog.FromContext(ctx).Info("Cannot check for AppliedManifestWorks to evict; retrying", "reason", err.Error(), "retryIn", interval)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// sweep looks at every AppliedManifestWork once.
func (e *evictor) sweep(ctx context.Context) error {
	list := &workv1.AppliedManifestWorkList{}
	if err := e.r.spoke.applied.List(ctx, list, client.MatchingLabels{clusterv1.ClusterNameLabel: e.r.cfg.ClusterName}); err != nil {
		return fmt.Errorf("list AppliedManifestWorks: %w", err)
	}
	for i := range list.Items {
		a := &list.Items[i]
		if !a.DeletionTimestamp.IsZero() {
			continue
		}
		gone, err := e.gone(ctx, a)
		if err != nil {
			return err
		}
		if gone {
			if err := e.evict(ctx, a); err != nil {
				return err
			}
		}
	}
	return nil
}

// gone says whether a is this agent's and its ManifestWork is gone from
// the hub, asking the hub itself before saying yes.
func (e *evictor) gone(ctx context.Context, a *workv1.AppliedManifestWork) (bool, error) {
	r := e.r
	switch {
	case a.Spec.HubHash == r.hubHash && a.Labels[AgentLabel] == r.agentKey:
	case a.Spec.HubHash != r.hubHash && a.Spec.AgentID == r.agentID && a.Labels[clusterv1.ClusterNameLabel] == r.cfg.ClusterName:
		// This agent applied it for another hub: the cluster moved.
		return true, nil
	default:
		return false, nil
	}
	key := client.ObjectKey{Namespace: r.cfg.ClusterName, Name: a.Spec.ManifestWorkName}
	if err := r.hub.Get(ctx, key, &workv1.ManifestWork{}); !apierrors.IsNotFound(err) {
		return false, nil
	}
	err := r.hubReader.Get(ctx, key, &workv1.ManifestWork{})
	switch {
	case apierrors.IsNotFound(err):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("ask the hub for ManifestWork %s: %w", key, err)
	}
	return false, nil
}

// evict starts a's grace period, or, when it is over, deletes what a
// applied (as a Foreground deletion of its work would) and then a.
func (e *evictor) evict(ctx context.Context, a *workv1.AppliedManifestWork) error {
	logger := klog.FromContext(ctx).WithValues("appliedManifestWork", a.Name)
	if a.Status.EvictionStartTime == nil {
		before := a.DeepCopy()
		a.Status.EvictionStartTime = ptr.To(metav1.Now())
		if err := e.r.spoke.applied.Status().Patch(ctx, a, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
			return fmt.Errorf("start the eviction of AppliedManifestWork %s: %w", a.Name, err)
		}
		logger.Info("The ManifestWork is gone from the hub; evicting what it applied after the grace period", "gracePeriod", e.r.cfg.EvictionGracePeriod)
		return nil
	}
	if time.Since(a.Status.EvictionStartTime.Time) < e.r.cfg.EvictionGracePeriod {
		return nil
	}
	waiting, err := e.r.releaseAll(ctx, a, func(workv1.ResourceIdentifier) bool { return false })
	if err != nil || waiting > 0 {
		return err
	}
	if err := e.r.deleteApplied(ctx, a); err != nil {
		return err
	}
	if name, ok := workName(e.r.hubHash, a.Name); ok {
		e.r.states.forget(name)
	}
	logger.Info("Evicted an AppliedManifestWork whose ManifestWork is gone from the hub")
	return nil
}
