package workreplicaset

import (
	"context"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// placementKeys indexes a replica set by "<namespace>/<placement>" of each PlacementRef.
func placementKeys(o client.Object) []string {
	mwrs, ok := o.(*workv1alpha1.ManifestWorkReplicaSet)
	if !ok {
		return nil
	}
	keys := make([]string, 0, len(mwrs.Spec.PlacementRefs))
	for _, ref := range mwrs.Spec.PlacementRefs {
		keys = append(keys, mwrs.Namespace+"/"+ref.Name)
	}
	return keys
}

// decisionClusters indexes a PlacementDecision by the clusters it holds.
func decisionClusters(o client.Object) []string {
	pd, ok := o.(*clusterv1beta1.PlacementDecision)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(pd.Status.Decisions))
	for _, d := range pd.Status.Decisions {
		out = append(out, d.ClusterName)
	}
	return out
}

// replicaSetChanged passes replica set changes that need a reconcile: its
// spec, its deletion, its finalizers, its pause; not the status this
// controller writes.
func replicaSetChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() ||
			e.ObjectOld.GetAnnotations()[workv1alpha1.PausedAnnotation] != e.ObjectNew.GetAnnotations()[workv1alpha1.PausedAnnotation] ||
			!e.ObjectOld.GetDeletionTimestamp().Equal(e.ObjectNew.GetDeletionTimestamp()) ||
			len(e.ObjectOld.GetFinalizers()) != len(e.ObjectNew.GetFinalizers())
	}}
}

// clusterChanged passes ManagedCluster changes that rendering or failover
// read: labels, allocatable, taints. Heartbeats and conditions do not.
func clusterChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*clusterv1.ManagedCluster)
		n, ok2 := e.ObjectNew.(*clusterv1.ManagedCluster)
		if !ok1 || !ok2 {
			return false
		}
		return !equality.Semantic.DeepEqual(o.Labels, n.Labels) ||
			!equality.Semantic.DeepEqual(o.Spec.Taints, n.Spec.Taints) ||
			!equality.Semantic.DeepEqual(o.Status.Allocatable, n.Status.Allocatable)
	}}
}

// ownerOfWork maps a ManifestWork to the replica set its label names.
func ownerOfWork(_ context.Context, w *workv1.ManifestWork) []reconcile.Request {
	ns, name, ok := strings.Cut(w.Labels[workv1.ManifestWorkReplicaSetLabel], ".")
	if !ok {
		return nil
	}
	return []reconcile.Request{request(ns, name)}
}

// ownerOfRevision maps a ControllerRevision to the replica set its label
// names: a revision deleted or changed by someone else is looked at again.
func ownerOfRevision(_ context.Context, cr *appsv1.ControllerRevision) []reconcile.Request {
	ns, name, ok := strings.Cut(cr.Labels[workv1.ManifestWorkReplicaSetLabel], ".")
	if !ok || ns != cr.Namespace {
		return nil
	}
	return []reconcile.Request{request(ns, name)}
}

// replicaSetsOfDecision maps a PlacementDecision to the replica sets of its Placement.
func (r *Reconciler) replicaSetsOfDecision(ctx context.Context, o client.Object) []reconcile.Request {
	placement := o.GetLabels()[clusterv1beta1.PlacementLabel]
	if placement == "" {
		return nil
	}
	return r.replicaSetsOf(ctx, o.GetNamespace(), placement)
}

// replicaSetsOfPlacement maps a Placement to the replica sets that name it.
func (r *Reconciler) replicaSetsOfPlacement(ctx context.Context, o client.Object) []reconcile.Request {
	return r.replicaSetsOf(ctx, o.GetNamespace(), o.GetName())
}

// replicaSetsOfCluster maps a ManagedCluster to the replica sets whose
// placements chose it, found through the decision index, and to those
// with a work in its namespace (a cluster that left while unreachable).
func (r *Reconciler) replicaSetsOfCluster(ctx context.Context, o client.Object) []reconcile.Request {
	logger := klog.FromContext(ctx)
	seen := map[reconcile.Request]bool{}
	var reqs []reconcile.Request
	add := func(rs ...reconcile.Request) {
		for _, req := range rs {
			if !seen[req] {
				seen[req] = true
				reqs = append(reqs, req)
			}
		}
	}
	decisions := &clusterv1beta1.PlacementDecisionList{}
	if err := r.Client.List(ctx, decisions, client.MatchingFields{decisionClusterIndex: o.GetName()}, client.UnsafeDisableDeepCopy); err != nil {
		logger.Error(err, "Cannot list the PlacementDecisions of a cluster", "cluster", o.GetName())
	}
	for _, pd := range decisions.Items {
		if p := pd.Labels[clusterv1beta1.PlacementLabel]; p != "" {
			add(r.replicaSetsOf(ctx, pd.Namespace, p)...)
		}
	}
	works := &workv1.ManifestWorkList{}
	if err := r.Works.List(ctx, works, client.InNamespace(o.GetName()), client.UnsafeDisableDeepCopy); err != nil {
		logger.Error(err, "Cannot list the ManifestWorks of a cluster", "cluster", o.GetName())
	}
	for i := range works.Items {
		add(ownerOfWork(ctx, &works.Items[i])...)
	}
	return reqs
}

// replicaSetsOf lists the replica sets that name Placement ns/placement.
func (r *Reconciler) replicaSetsOf(ctx context.Context, ns, placement string) []reconcile.Request {
	list := &workv1alpha1.ManifestWorkReplicaSetList{}
	if err := r.Client.List(ctx, list, client.MatchingFields{placementIndex: ns + "/" + placement}, client.UnsafeDisableDeepCopy); err != nil {
		klog.FromContext(ctx).Error(err, "Cannot list the ManifestWorkReplicaSets of a Placement", "placement", klog.KRef(ns, placement))
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for _, m := range list.Items {
		reqs = append(reqs, request(m.Namespace, m.Name))
	}
	return reqs
}

func request(ns, name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}
}
