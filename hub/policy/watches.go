package policy

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	policyv1beta1 "github.com/flotilla-io/flotilla/api/policy/v1beta1"
)

// rootOfPolicy maps a root policy to itself and a replicated one to its root.
func rootOfPolicy(_ context.Context, o client.Object) []reconcile.Request {
	root, ok := o.GetLabels()[policyv1.RootPolicyLabel]
	if !ok {
		return []reconcile.Request{request(o.GetNamespace(), o.GetName())}
	}
	ns, name, ok := splitRoot(root)
	if !ok {
		return nil
	}
	return []reconcile.Request{request(ns, name)}
}

// splitRoot splits "<ns>.<name>"; a namespace never holds a dot.
func splitRoot(root string) (ns, name string, ok bool) {
	return strings.Cut(root, ".")
}

// policiesOfBinding maps a PlacementBinding to the policies it names,
// directly or through a PolicySet. For an update it is called with the old
// and the new binding, so that a subject removed counts too.
func (r *Reconciler) policiesOfBinding(ctx context.Context, o client.Object) []reconcile.Request {
	b, ok := o.(*policyv1.PlacementBinding)
	if !ok {
		return nil
	}
	var reqs []reconcile.Request
	for _, s := range b.Subjects {
		switch s.Kind {
		case policyv1.PolicyKind:
			reqs = append(reqs, request(b.Namespace, s.Name))
		case policyv1.PolicySetKind:
			set := &policyv1beta1.PolicySet{}
			if err := r.Client.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: s.Name}, set); err != nil {
				continue
			}
			reqs = append(reqs, policiesOfSet(ctx, set)...)
		}
	}
	return reqs
}

// policiesOfSet maps a PolicySet to the policies it lists.
func policiesOfSet(_ context.Context, o client.Object) []reconcile.Request {
	set, ok := o.(*policyv1beta1.PolicySet)
	if !ok {
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(set.Spec.Policies))
	for _, p := range set.Spec.Policies {
		reqs = append(reqs, request(set.Namespace, string(p)))
	}
	return reqs
}

// policiesOfDecision maps a PlacementDecision to the policies bound to its
// Placement.
func (r *Reconciler) policiesOfDecision(ctx context.Context, o client.Object) []reconcile.Request {
	placement := o.GetLabels()[clusterv1beta1.PlacementLabel]
	if placement == "" {
		return nil
	}
	bindings := &policyv1.PlacementBindingList{}
	if err := r.Client.List(ctx, bindings, client.InNamespace(o.GetNamespace()), client.UnsafeDisableDeepCopy); err != nil {
		klog.FromContext(ctx).Error(err, "Cannot list PlacementBindings", "namespace", o.GetNamespace())
		return nil
	}
	var reqs []reconcile.Request
	for i := range bindings.Items {
		if bindsPlacement(&bindings.Items[i], placement) {
			reqs = append(reqs, r.policiesOfBinding(ctx, &bindings.Items[i])...)
		}
	}
	return reqs
}

func request(ns, name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}
}

// templatedPoliciesOfCluster maps a ManagedCluster whose labels changed to
// the roots that have a copy in its namespace and hub templates, which
// may read .ManagedClusterLabels.
func (r *Reconciler) templatedPoliciesOfCluster(ctx context.Context, o client.Object) []reconcile.Request {
	return r.rootsWithCopyIn(ctx, o.GetName(), func(root types.NamespacedName) bool { return r.refs.withTemplates(root) })
}

// taintsChanged passes ManagedCluster updates that change its taints,
// which decide whether a copy of a cluster no longer chosen stays for
// failover.
func taintsChanged() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return false },
		DeleteFunc: func(event.DeleteEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, ok1 := e.ObjectOld.(*clusterv1.ManagedCluster)
			n, ok2 := e.ObjectNew.(*clusterv1.ManagedCluster)
			return ok1 && ok2 && !equality.Semantic.DeepEqual(o.Spec.Taints, n.Spec.Taints)
		},
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// policiesOfCluster maps a ManagedCluster to the roots with a copy in its
// namespace.
func (r *Reconciler) policiesOfCluster(ctx context.Context, o client.Object) []reconcile.Request {
	return r.rootsWithCopyIn(ctx, o.GetName(), func(types.NamespacedName) bool { return true })
}

// rootsWithCopyIn lists the roots with a copy in cluster's namespace that
// keep says to reconcile.
func (r *Reconciler) rootsWithCopyIn(ctx context.Context, cluster string, keep func(root types.NamespacedName) bool) []reconcile.Request {
	list := &policyv1.PolicyList{}
	if err := r.Client.List(ctx, list, client.InNamespace(cluster), client.HasLabels{policyv1.RootPolicyLabel}, client.UnsafeDisableDeepCopy); err != nil {
		klog.FromContext(ctx).Error(err, "Cannot list the replicated policies of a cluster", "cluster", cluster)
		return nil
	}
	var reqs []reconcile.Request
	for i := range list.Items {
		ns, name, ok := splitRoot(list.Items[i].Labels[policyv1.RootPolicyLabel])
		if ok && keep(types.NamespacedName{Namespace: ns, Name: name}) {
			reqs = append(reqs, request(ns, name))
		}
	}
	return reqs
}
