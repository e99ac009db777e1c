package policy

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	policyv1beta1 "github.com/flotilla-io/flotilla/api/policy/v1beta1"
)

// SetReconciler writes the status of PolicySets: the bindings that place
// them, and the compliance of their policies rolled up, with OCM's
// statusMessage.
type SetReconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
}

// Reconcile writes the status of one PolicySet.
func (r *SetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	set := &policyv1beta1.PolicySet{}
	if err := r.Client.Get(ctx, req.NamespacedName, set); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := set.DeepCopy()
	bindings := &policyv1.PlacementBindingList{}
	if err := r.Client.List(ctx, bindings, client.InNamespace(set.Namespace)); err != nil {
		return ctrl.Result{}, fmt.Errorf("list PlacementBindings in %s: %w", set.Namespace, err)
	}
	members := map[string]*policyv1.Policy{}
	for _, name := range set.Spec.Policies {
		p := &policyv1.Policy{}
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: set.Namespace, Name: string(name)}, p)
		switch {
		case apierrors.IsNotFound(err):
			members[string(name)] = nil
		case err != nil:
			return ctrl.Result{}, fmt.Errorf("get Policy %s/%s of PolicySet %s: %w", set.Namespace, name, set.Name, err)
		default:
			members[string(name)] = p
		}
	}
	set.Status.Placement = setPlacements(set.Name, bindings.Items)
	set.Status.Compliant, set.Status.StatusMessage = setCompliance(set.Spec.Policies, members)
	if len(set.Spec.Policies) == 0 {
		set.Status = policyv1beta1.PolicySetStatus{}
	}
	if equality.Semantic.DeepEqual(before.Status, set.Status) {
		return ctrl.Result{}, nil
	}
	if err := r.Client.Status().Patch(ctx, set, client.MergeFrom(before)); err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		return ctrl.Result{}, client.IgnoreNotFound(fmt.Errorf("patch status of PolicySet %s/%s: %w", set.Namespace, set.Name, err))
	}
	return ctrl.Result{}, nil
}

// setPlacements lists the bindings that name the set, sorted.
func setPlacements(set string, bindings []policyv1.PlacementBinding) []policyv1beta1.PolicySetStatusPlacement {
	var out []policyv1beta1.PolicySetStatusPlacement
	for i := range bindings {
		b := &bindings[i]
		if !slices.ContainsFunc(b.Subjects, func(s policyv1.Subject) bool { return s.Kind == policyv1.PolicySetKind && s.Name == set }) {
			continue
		}
		p := policyv1beta1.PolicySetStatusPlacement{PlacementBinding: b.Name}
		if b.PlacementRef.Kind == policyv1.PlacementKind {
			p.Placement = b.PlacementRef.Name
		} else {
			p.PlacementRule = b.PlacementRef.Name
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b policyv1beta1.PolicySetStatusPlacement) int {
		return strings.Compare(a.PlacementBinding, b.PlacementBinding)
	})
	return out
}

// setCompliance rolls up the compliance of a set's policies (nil: deleted),
// as OCM does: NonCompliant if any is; else unknown ("") while any has not
// reported; else Pending if any is; else Compliant. Disabled and deleted
// policies do not count. The message names the policies that do not count
// or hold the roll-up back.
func setCompliance(names []policyv1.NonEmptyString, members map[string]*policyv1.Policy) (policyv1.ComplianceState, string) {
	var disabled, deleted, pending, unknown []string
	var states []policyv1.ComplianceState
	for _, n := range names {
		name := string(n)
		p := members[name]
		switch {
		case p == nil:
			deleted = append(deleted, name)
			continue
		case p.Spec.Disabled:
			disabled = append(disabled, name)
			continue
		case p.Status.ComplianceState == policyv1.Pending:
			pending = append(pending, name)
		case p.Status.ComplianceState == "":
			unknown = append(unknown, name)
		}
		states = append(states, p.Status.ComplianceState)
	}
	var parts []string
	for _, g := range []struct {
		prefix string
		names  []string
	}{
		{"Disabled policies: ", disabled},
		{"Deleted policies: ", deleted},
		{"Policies awaiting pending dependencies: ", pending},
		{"No status provided while awaiting policy status: ", unknown},
	} {
		if len(g.names) > 0 {
			parts = append(parts, g.prefix+strings.Join(g.names, ", "))
		}
	}
	msg := strings.Join(parts, "; ")
	if msg == "" {
		msg = "All policies are reporting status"
	}
	var compliant policyv1.ComplianceState
	switch {
	case slices.Contains(states, policyv1.NonCompliant):
		compliant = policyv1.NonCompliant
	case len(states) == 0 || len(unknown) > 0:
	case len(pending) > 0:
		compliant = policyv1.Pending
	default:
		compliant = policyv1.Compliant
	}
	return compliant, msg
}

// SetupWithManager registers the reconciler: PolicySets, the root policies
// they list, and the bindings that name them.
func (r *SetReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("policyset-status").
		For(&policyv1beta1.PolicySet{}).
		Watches(&policyv1.Policy{}, handler.EnqueueRequestsFromMapFunc(r.setsOfPolicy)).
		Watches(&policyv1.PlacementBinding{}, handler.EnqueueRequestsFromMapFunc(setsOfBinding)).
		Complete(r)
}

// setsOfPolicy maps a root policy to the sets of its namespace that list it.
func (r *SetReconciler) setsOfPolicy(ctx context.Context, o client.Object) []reconcile.Request {
	if _, replicated := o.GetLabels()[policyv1.RootPolicyLabel]; replicated {
		return nil
	}
	sets := &policyv1beta1.PolicySetList{}
	if err := r.Client.List(ctx, sets, client.InNamespace(o.GetNamespace()), client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for i := range sets.Items {
		if slices.Contains(sets.Items[i].Spec.Policies, policyv1.NonEmptyString(o.GetName())) {
			reqs = append(reqs, request(o.GetNamespace(), sets.Items[i].Name))
		}
	}
	return reqs
}

// setsOfBinding maps a binding to the sets it names.
func setsOfBinding(_ context.Context, o client.Object) []reconcile.Request {
	b, ok := o.(*policyv1.PlacementBinding)
	if !ok {
		return nil
	}
	var reqs []reconcile.Request
	for _, s := range b.Subjects {
		if s.Kind == policyv1.PolicySetKind {
			reqs = append(reqs, request(b.Namespace, s.Name))
		}
	}
	return reqs
}
