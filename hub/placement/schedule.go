package placement

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/util/sets"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	"github.com/flotilla-io/flotilla/hub/placement/scheduler"
)

// schedule gathers the scheduler's input from the cache and runs it. The
// lists are not copied: the scheduler only reads them.
func (r *Reconciler) schedule(ctx context.Context, s *scope) (ctrl.Result, error) {
	p := s.placement
	in := scheduler.Input{Placement: p, Now: s.now}

	bindings := &clusterv1beta2.ManagedClusterSetBindingList{}
	if err := r.Client.List(ctx, bindings, client.InNamespace(p.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, fmt.Errorf("list ManagedClusterSetBindings in %s: %w", p.Namespace, err)
	}
	in.Bindings = pointers(bindings.Items)
	clusterSets := &clusterv1beta2.ManagedClusterSetList{}
	if err := r.Client.List(ctx, clusterSets, client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, fmt.Errorf("list ManagedClusterSets: %w", err)
	}
	in.ClusterSets = pointers(clusterSets.Items)
	clusters := &clusterv1.ManagedClusterList{}
	if err := r.Client.List(ctx, clusters, client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, fmt.Errorf("list ManagedClusters: %w", err)
	}
	in.Clusters = pointers(clusters.Items)

	own, err := r.ownDecisions(ctx, p, client.UnsafeDisableDeepCopy)
	if err != nil {
		return ctrl.Result{}, err
	}
	if len(own) > 0 {
		s.previous = sets.New[string]()
		for _, pd := range own {
			for _, d := range pd.Status.Decisions {
				s.previous.Insert(d.ClusterName)
			}
		}
	}
	in.Previous = s.previous

	needs := scheduler.RequirementsOf(p)
	if needs.DecisionCounts {
		if in.DecisionCounts, err = r.decisionCounts(ctx, p); err != nil {
			return ctrl.Result{}, err
		}
	}
	if needs.Scores {
		if in.Scores, err = r.scores(ctx); err != nil {
			return ctrl.Result{}, err
		}
	}
	s.result = scheduler.Schedule(in)
	return ctrl.Result{RequeueAfter: s.result.RequeueAfter}, nil
}

// ownDecisions lists the PlacementDecisions of p from the cache.
func (r *Reconciler) ownDecisions(ctx context.Context, p *clusterv1beta1.Placement, opts ...client.ListOption) ([]clusterv1beta1.PlacementDecision, error) {
	list := &clusterv1beta1.PlacementDecisionList{}
	opts = append(opts, client.InNamespace(p.Namespace), client.MatchingLabels{clusterv1beta1.PlacementLabel: p.Name})
	if err := r.Client.List(ctx, list, opts...); err != nil {
		return nil, fmt.Errorf("list the PlacementDecisions of %s/%s: %w", p.Namespace, p.Name, err)
	}
	return list.Items, nil
}

// decisionCounts counts, per cluster, the other placements' decisions.
func (r *Reconciler) decisionCounts(ctx context.Context, p *clusterv1beta1.Placement) (map[string]int, error) {
	list := &clusterv1beta1.PlacementDecisionList{}
	if err := r.Client.List(ctx, list, client.HasLabels{clusterv1beta1.PlacementLabel}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list PlacementDecisions: %w", err)
	}
	counts := map[string]int{}
	for _, pd := range list.Items {
		if pd.Namespace == p.Namespace && pd.Labels[clusterv1beta1.PlacementLabel] == p.Name {
			continue
		}
		for _, d := range pd.Status.Decisions {
			counts[d.ClusterName]++
		}
	}
	return counts, nil
}

// scores returns the AddOnPlacementScores by cluster namespace and name.
func (r *Reconciler) scores(ctx context.Context) (map[string]map[string]*clusterv1alpha1.AddOnPlacementScore, error) {
	list := &clusterv1alpha1.AddOnPlacementScoreList{}
	if err := r.Client.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list AddOnPlacementScores: %w", err)
	}
	out := map[string]map[string]*clusterv1alpha1.AddOnPlacementScore{}
	for i := range list.Items {
		s := &list.Items[i]
		if out[s.Namespace] == nil {
			out[s.Namespace] = map[string]*clusterv1alpha1.AddOnPlacementScore{}
		}
		out[s.Namespace][s.Name] = s
	}
	return out, nil
}

func pointers[T any](items []T) []*T {
	out := make([]*T, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}
