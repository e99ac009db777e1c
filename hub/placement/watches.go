package placement

import (
	"context"
	"maps"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	"github.com/flotilla-io/flotilla/hub/clusterset"
)

// clusterChanged passes the cluster events that can change a scheduling:
// all but updates that touch none of labels, annotations, spec, status and
// deletion (a resync, or managed fields).
func clusterChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		oldC, ok1 := e.ObjectOld.(*clusterv1.ManagedCluster)
		newC, ok2 := e.ObjectNew.(*clusterv1.ManagedCluster)
		if !ok1 || !ok2 {
			return true
		}
		return !maps.Equal(oldC.Labels, newC.Labels) || !maps.Equal(oldC.Annotations, newC.Annotations) ||
			oldC.DeletionTimestamp.IsZero() != newC.DeletionTimestamp.IsZero() ||
			!equality.Semantic.DeepEqual(oldC.Spec, newC.Spec) || !equality.Semantic.DeepEqual(oldC.Status, newC.Status)
	}}
}

// placementsOfCluster maps a cluster to the placements of the namespaces
// bound to a set that selects it. For an update it is called with the old
// and the new cluster, so that leaving a set counts too.
func (r *Reconciler) placementsOfCluster(ctx context.Context, o client.Object) []reconcile.Request {
	sets := &clusterv1beta2.ManagedClusterSetList{}
	if err := r.Client.List(ctx, sets, client.UnsafeDisableDeepCopy); err != nil {
		klog.FromContext(ctx).Error(err, "Cannot list ManagedClusterSets to find the placements a cluster affects", "managedCluster", klog.KObj(o))
		return nil
	}
	var reqs []reconcile.Request
	for i := range sets.Items {
		sel, err := clusterset.Selector(&sets.Items[i])
		if err != nil || !sel.Matches(labels.Set(o.GetLabels())) {
			continue
		}
		reqs = append(reqs, r.placementsOfSet(ctx, &sets.Items[i])...)
	}
	return reqs
}

// placementsOfSet maps a set to the placements of the namespaces it is bound to.
func (r *Reconciler) placementsOfSet(ctx context.Context, set client.Object) []reconcile.Request {
	bindings := &clusterv1beta2.ManagedClusterSetBindingList{}
	if err := r.Client.List(ctx, bindings, client.MatchingFields{bindingSetIndex: set.GetName()}, client.UnsafeDisableDeepCopy); err != nil {
		klog.FromContext(ctx).Error(err, "Cannot list the bindings of a ManagedClusterSet", "managedClusterSet", klog.KObj(set))
		return nil
	}
	var reqs []reconcile.Request
	for i := range bindings.Items {
		reqs = append(reqs, r.placementsIn(ctx, bindings.Items[i].Namespace)...)
	}
	return reqs
}

// placementsOfBinding maps a binding to the placements of its namespace.
func (r *Reconciler) placementsOfBinding(ctx context.Context, b client.Object) []reconcile.Request {
	return r.placementsIn(ctx, b.GetNamespace())
}

func (r *Reconciler) placementsIn(ctx context.Context, namespace string) []reconcile.Request {
	list := &clusterv1beta1.PlacementList{}
	if err := r.Client.List(ctx, list, client.InNamespace(namespace), client.UnsafeDisableDeepCopy); err != nil {
		klog.FromContext(ctx).Error(err, "Cannot list Placements", "namespace", namespace)
		return nil
	}
	return requests(list.Items)
}

// placementsOfScore maps an AddOnPlacementScore to the placements that
// may read it.
func (r *Reconciler) placementsOfScore(ctx context.Context, s client.Object) []reconcile.Request {
	var reqs []reconcile.Request
	for _, key := range []string{s.GetName(), scoresAny} {
		list := &clusterv1beta1.PlacementList{}
		if err := r.Client.List(ctx, list, client.MatchingFields{scoreNameIndex: key}, client.UnsafeDisableDeepCopy); err != nil {
			klog.FromContext(ctx).Error(err, "Cannot list the Placements that read an AddOnPlacementScore", "addOnPlacementScore", klog.KObj(s))
			return nil
		}
		reqs = append(reqs, requests(list.Items)...)
	}
	return reqs
}

func requests(items []clusterv1beta1.Placement) []reconcile.Request {
	reqs := make([]reconcile.Request, 0, len(items))
	for _, p := range items {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: p.Namespace, Name: p.Name}})
	}
	return reqs
}

// scoreNames indexes a placement by the AddOnPlacementScore names it
// reads: those of its AddOn prioritizers, and any (scoresAny) when a CEL
// expression may call scores().
func scoreNames(o client.Object) []string {
	p := o.(*clusterv1beta1.Placement)
	var out []string
	for _, c := range p.Spec.PrioritizerPolicy.Configurations {
		if c.ScoreCoordinate != nil && c.ScoreCoordinate.AddOn != nil {
			out = append(out, c.ScoreCoordinate.AddOn.ResourceName)
		}
	}
	for _, pred := range p.Spec.Predicates {
		for _, expr := range pred.RequiredClusterSelector.CelSelector.CelExpressions {
			if strings.Contains(expr, "scores") {
				return append(out, scoresAny)
			}
		}
	}
	return out
}

// bindingSet indexes a binding by the set it names.
func bindingSet(o client.Object) []string {
	return []string{o.(*clusterv1beta2.ManagedClusterSetBinding).Spec.ClusterSet}
}
