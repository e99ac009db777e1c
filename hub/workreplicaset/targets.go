package workreplicaset

import (
	"github.com/flotilla-io/flotilla/internal/rollout"
	"time"

	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/hub/failover"
	"github.com/flotilla-io/flotilla/hub/workreplicaset/render"
)

// placementTarget is one PlacementRef and what its Placement decided.
type placementTarget struct {
	name string
	// found: the Placement exists; decided: it has PlacementDecisions.
	found, decided bool
	// groups are the decision groups of the chosen clusters.
	groups map[string]rollout.Group
	// clusters are the clusters rolled out by this placement (not those
	// an earlier PlacementRef already rolls out), in decision order.
	clusters []string
	// decidedAt is when the placement last wrote a PlacementDecision.
	decidedAt time.Time
	// grace is the Placement's failover grace; graceErr says why its
	// annotation could not be read.
	grace    time.Duration
	graceErr error
	// decisionOrder are all the clusters the placement chose.
	decisionOrder []string
	// clustersPerGroup is the placement's clustersPerDecisionGroup.
	clustersPerGroup intstr.IntOrString
	strategy         rollout.Strategy
	// rollout is the decision of this reconcile, recomputed after the writes.
	rollout rollout.Result
}

// findTargets reads each PlacementRef's Placement and decisions, the
// chosen clusters, and renders each cluster's ManifestWork spec. Input
// that can never work (a bad strategy, a render error) ends the reconcile
// with a TerminalError after the status says what to fix.
func (r *Reconciler) findTargets(ctx context.Context, s *scope) (ctrl.Result, error) {
	if errs := validation.IsValidLabelValue(s.owner); len(errs) > 0 {
		s.invalid = fmt.Errorf("the ManifestWorks would carry label %s=%s, which is not a valid label value (%s): shorten the namespace or the name to 63 characters together",
			"work.open-cluster-management.io/manifestworkreplicaset", s.owner, errs[0])
		return ctrl.Result{}, nil
	}
	s.chosen = map[string]*placementTarget{}
	var clusters []render.Cluster
	for i, ref := range s.mwrs.Spec.PlacementRefs {
		pt, err := r.readPlacement(ctx, s.mwrs.Namespace, ref.Name)
		if err != nil {
			return ctrl.Result{}, err
		}
		s.placements = append(s.placements, pt)
		for _, c := range pt.order() {
			if s.chosen[c] != nil {
				continue
			}
			mc := &clusterv1.ManagedCluster{}
			if err := r.Client.Get(ctx, client.ObjectKey{Name: c}, mc); client.IgnoreNotFound(err) != nil {
				return ctrl.Result{}, fmt.Errorf("get ManagedCluster %s: %w", c, err)
			}
			s.chosen[c] = pt
			pt.clusters = append(pt.clusters, c)
			clusters = append(clusters, renderCluster(c, mc))
		}
		pt.strategy, err = rollout.ResolveStrategy(ref.RolloutStrategy, len(pt.decisionOrder), pt.clustersPerGroup, fmt.Sprintf("spec.placementRefs[%d].rolloutStrategy", i))
		if err != nil && s.invalid == nil {
			s.invalid = err
		}
	}
	if s.invalid != nil {
		return ctrl.Result{}, nil
	}
	s.clusters = clusters
	rendered, err := render.Plan(&s.mwrs.Spec, clusters)
	if err != nil {
		s.invalid = err
		return ctrl.Result{}, nil
	}
	s.rendered = rendered
	return ctrl.Result{}, nil
}

// readPlacement reads a Placement and the clusters its decisions chose.
func (r *Reconciler) readPlacement(ctx context.Context, ns, name string) (*placementTarget, error) {
	pt := &placementTarget{name: name, groups: map[string]rollout.Group{}, grace: failover.DefaultGrace}
	p := &clusterv1beta1.Placement{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return pt, nil
		}
		return nil, fmt.Errorf("get Placement %s/%s: %w", ns, name, err)
	}
	pt.found = true
	pt.grace, pt.graceErr = failover.Grace(p)
	pt.clustersPerGroup = p.Spec.DecisionStrategy.GroupStrategy.ClustersPerDecisionGroup
	list := &clusterv1beta1.PlacementDecisionList{}
	if err := r.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{clusterv1beta1.PlacementLabel: name}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list the PlacementDecisions of %s/%s: %w", ns, name, err)
	}
	pt.decided = len(list.Items) > 0
	for _, pd := range list.Items {
		pt.decidedAt = latest(pt.decidedAt, failover.DecidedAt(&pd))
		g := rollout.Group{Name: pd.Labels[clusterv1beta1.DecisionGroupNameLabel]}
		if i, err := strconv.ParseInt(pd.Labels[clusterv1beta1.DecisionGroupIndexLabel], 10, 32); err == nil {
			g.Index = int32(i)
		}
		for _, d := range pd.Status.Decisions {
			if d.ClusterName != "" {
				if _, dup := pt.groups[d.ClusterName]; !dup {
					pt.groups[d.ClusterName] = g
					pt.decisionOrder = append(pt.decisionOrder, d.ClusterName)
				}
			}
		}
	}
	return pt, nil
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// order returns the clusters the placement chose, in decision order.
func (pt *placementTarget) order() []string { return pt.decisionOrder }

// renderCluster is what rendering needs of a chosen cluster; a cluster
// that no longer exists renders with no labels.
func renderCluster(name string, mc *clusterv1.ManagedCluster) render.Cluster {
	c := render.Cluster{Name: name, Labels: mc.Labels}
	if len(mc.Status.Allocatable) > 0 {
		c.Allocatable = corev1.ResourceList{}
		for k, v := range mc.Status.Allocatable {
			c.Allocatable[corev1.ResourceName(k)] = v
		}
	}
	return c
}
