package addon

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/internal/addon"
	"github.com/flotilla-io/flotilla/internal/rollout"
)

// placementNode is one placement of the install strategy and what its
// decisions chose.
type placementNode struct {
	ref      addonv1alpha1.PlacementStrategy
	field    string
	found    bool
	groups   map[string]rollout.Group
	chosen   []string
	strategy rollout.Strategy
	// invalid says why the rollout strategy can never be read.
	invalid error
	// desired are the placement's configs over the defaults, with hashes.
	desired []addonv1alpha1.ConfigReference
	// clusters are the chosen clusters this placement configures (a
	// later placement that chose one too configures it).
	clusters []string
	result   rollout.Result
}

// install reads the placements of a Placements install strategy and makes
// the add-on's ManagedClusterAddOns follow their decisions: one in every
// chosen cluster, none elsewhere, with the cluster's add-on annotations.
func (r *Reconciler) install(ctx context.Context, s *scope) (ctrl.Result, error) {
	if !s.managed || s.cma.Spec.InstallStrategy.Type != addonv1alpha1.AddonInstallStrategyPlacements {
		return ctrl.Result{}, nil
	}
	for i, ps := range s.cma.Spec.InstallStrategy.Placements {
		node, err := r.readPlacement(ctx, ps, fmt.Sprintf("spec.installStrategy.placements[%d].rolloutStrategy", i))
		if err != nil {
			return ctrl.Result{}, err
		}
		s.placements = append(s.placements, node)
		for _, c := range node.chosen {
			s.nodeOf[c] = node
		}
	}
	for _, node := range s.placements {
		for _, c := range node.chosen {
			if s.nodeOf[c] == node && !slices.Contains(node.clusters, c) {
				node.clusters = append(node.clusters, c)
			}
		}
	}
	var errs []error
	for ns, mca := range s.mcas {
		if s.nodeOf[ns] != nil || !mca.DeletionTimestamp.IsZero() {
			continue
		}
		if err := r.Client.Delete(ctx, mca, client.Preconditions{UID: &mca.UID}); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("delete ManagedClusterAddOn %s/%s, which no placement chooses: %w", ns, mca.Name, err))
			continue
		}
		klog.FromContext(ctx).Info("Deleted a ManagedClusterAddOn no placement chooses", "managedClusterAddOn", klog.KObj(mca))
		delete(s.mcas, ns)
		delete(s.before, ns)
	}
	for c := range s.nodeOf {
		if err := r.ensureInstalled(ctx, s, c); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return ctrl.Result{}, fmt.Errorf("install add-on %s: %w", s.name, errors.Join(errs...))
	}
	return ctrl.Result{}, nil
}

// ensureInstalled creates the add-on's ManagedClusterAddOn in chosen
// cluster c, or mirrors the cluster's add-on annotations onto it.
func (r *Reconciler) ensureInstalled(ctx context.Context, s *scope, c string) error {
	mc := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: c}, mc); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("get ManagedCluster %s: %w", c, err)
	}
	if mca := s.mcas[c]; mca != nil {
		if mca.DeletionTimestamp.IsZero() {
			mca.Annotations = mirrored(mca.Annotations, mc.Annotations)
		}
		return nil
	}
	if !mc.DeletionTimestamp.IsZero() {
		return nil
	}
	mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{
		Namespace: c, Name: s.name, Annotations: mirrored(nil, mc.Annotations),
		OwnerReferences: []metav1.OwnerReference{ownerRef(s.cma)},
	}}
	if err := r.Client.Create(ctx, mca); err != nil {
		if apierrors.IsAlreadyExists(err) || apierrors.IsNotFound(err) {
			// Made meanwhile (the watch brings it), or the cluster
			// namespace is not there yet (its creation brings the cluster).
			return nil
		}
		return fmt.Errorf("create ManagedClusterAddOn %s/%s: %w", c, s.name, err)
	}
	klog.FromContext(ctx).Info("Created the ManagedClusterAddOn of a chosen cluster", "managedClusterAddOn", klog.KObj(mca))
	return nil
}

// mirrored is mca's annotations with the cluster's add-on annotations
// (keys under addon.open-cluster-management.io/) copied, changed and
// removed; the v1alpha1 install namespace is the ManagedClusterAddOn's own.
func mirrored(mca, cluster map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range mca {
		if !strings.HasPrefix(k, addon.AnnotationPrefix) || k == addon.InstallNamespaceAnnotation {
			out[k] = v
		}
	}
	for k, v := range cluster {
		if strings.HasPrefix(k, addon.AnnotationPrefix) && k != addon.InstallNamespaceAnnotation {
			out[k] = v
		}
	}
	if maps.Equal(out, mca) {
		return mca
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// readPlacement reads a placement's decisions: the chosen clusters in
// decision order, their decision groups, and the rollout strategy.
func (r *Reconciler) readPlacement(ctx context.Context, ps addonv1alpha1.PlacementStrategy, field string) (*placementNode, error) {
	node := &placementNode{ref: ps, field: field, groups: map[string]rollout.Group{}}
	p := &clusterv1beta1.Placement{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ps.Namespace, Name: ps.Name}, p); err != nil {
		if apierrors.IsNotFound(err) {
			return node, nil
		}
		return nil, fmt.Errorf("get Placement %s/%s: %w", ps.Namespace, ps.Name, err)
	}
	node.found = true
	list := &clusterv1beta1.PlacementDecisionList{}
	if err := r.Client.List(ctx, list, client.InNamespace(ps.Namespace), client.MatchingLabels{clusterv1beta1.PlacementLabel: ps.Name}); err != nil {
		return nil, fmt.Errorf("list the PlacementDecisions of %s/%s: %w", ps.Namespace, ps.Name, err)
	}
	for _, pd := range list.Items {
		g := rollout.Group{Name: pd.Labels[clusterv1beta1.DecisionGroupNameLabel]}
		if i, err := strconv.ParseInt(pd.Labels[clusterv1beta1.DecisionGroupIndexLabel], 10, 32); err == nil {
			g.Index = int32(i)
		}
		for _, d := range pd.Status.Decisions {
			if _, dup := node.groups[d.ClusterName]; d.ClusterName != "" && !dup {
				node.groups[d.ClusterName] = g
				node.chosen = append(node.chosen, d.ClusterName)
			}
		}
	}
	perGroup := p.Spec.DecisionStrategy.GroupStrategy.ClustersPerDecisionGroup
	if perGroup == (intstr.IntOrString{}) {
		perGroup = intstr.FromString("100%")
	}
	node.strategy, node.invalid = rollout.ResolveStrategy(ps.RolloutStrategy, len(node.chosen), perGroup, field)
	return node, nil
}
