package policy

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	policyv1beta1 "github.com/flotilla-io/flotilla/api/policy/v1beta1"
)

// A PolicySet dependency means: every policy of the set has reached the
// named compliance on this cluster. Only the hub knows which policies a set
// holds (an agent reads nothing but its own cluster namespace), so the
// copies carry, in place of the PolicySet dependency, one Policy dependency
// per policy of the set, which the agent evaluates like any other. A set
// the hub cannot find stays as it is, and the agent reports it Pending.

// expandSetDependencies replaces, in the copy's spec, each dependency on a
// PolicySet that exists with dependencies on the set's policies.
func (r *Reconciler) expandSetDependencies(ctx context.Context, root *policyv1.Policy, spec *policyv1.PolicySpec) error {
	sets := map[client.ObjectKey][]policyv1.PolicyDependency{}
	expand := func(deps []policyv1.PolicyDependency) ([]policyv1.PolicyDependency, error) {
		var out []policyv1.PolicyDependency
		for _, dep := range deps {
			if !isSetDependency(dep) {
				out = append(out, dep)
				continue
			}
			key := client.ObjectKey{Namespace: dep.Namespace, Name: dep.Name}
			if key.Namespace == "" {
				key.Namespace = root.Namespace
			}
			members, seen := sets[key]
			if !seen {
				var err error
				if members, err = r.setMembers(ctx, key); err != nil {
					return nil, err
				}
				sets[key] = members
			}
			if members == nil {
				out = append(out, dep)
				continue
			}
			for _, m := range members {
				m.Compliance = dep.Compliance
				out = append(out, m)
			}
		}
		return out, nil
	}
	var err error
	if spec.Dependencies, err = expand(spec.Dependencies); err != nil {
		return err
	}
	for i := range spec.PolicyTemplates {
		t := &spec.PolicyTemplates[i]
		if t.ExtraDependencies, err = expand(t.ExtraDependencies); err != nil {
			return err
		}
	}
	return nil
}

// setMembers returns a Policy dependency for each policy of a PolicySet
// (not empty for an empty set), or nil when the set does not exist.
func (r *Reconciler) setMembers(ctx context.Context, key client.ObjectKey) ([]policyv1.PolicyDependency, error) {
	set := &policyv1beta1.PolicySet{}
	if err := r.Client.Get(ctx, key, set); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("get PolicySet %s a dependency names: %w", key, err)
	}
	members := make([]policyv1.PolicyDependency, 0, len(set.Spec.Policies))
	for _, p := range set.Spec.Policies {
		members = append(members, policyv1.PolicyDependency{
			APIVersion: policyv1.GroupVersion.String(), Kind: policyv1.PolicyKind,
			Namespace: set.Namespace, Name: string(p),
		})
	}
	return members, nil
}

func isSetDependency(dep policyv1.PolicyDependency) bool {
	gv, _ := schema.ParseGroupVersion(dep.APIVersion)
	return dep.Kind == policyv1.PolicySetKind && gv.Group == policyv1.GroupVersion.Group
}

// policiesOfSetAndDependents maps a PolicySet to the policies it lists
// and to the root policies in its namespace that depend on it, whose copies
// list the set's policies.
func (r *Reconciler) policiesOfSetAndDependents(ctx context.Context, o client.Object) []reconcile.Request {
	return append(policiesOfSet(ctx, o), r.dependentsOfSet(ctx, o)...)
}

func (r *Reconciler) dependentsOfSet(ctx context.Context, o client.Object) []reconcile.Request {
	roots := &policyv1.PolicyList{}
	if err := r.Client.List(ctx, roots, client.InNamespace(o.GetNamespace()), client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for i := range roots.Items {
		if dependsOnSet(&roots.Items[i], o.GetNamespace(), o.GetName()) {
			reqs = append(reqs, request(roots.Items[i].Namespace, roots.Items[i].Name))
		}
	}
	return reqs
}

func dependsOnSet(p *policyv1.Policy, ns, name string) bool {
	names := func(deps []policyv1.PolicyDependency) bool {
		for _, d := range deps {
			if isSetDependency(d) && d.Name == name && (d.Namespace == ns || d.Namespace == "" && p.Namespace == ns) {
				return true
			}
		}
		return false
	}
	if names(p.Spec.Dependencies) {
		return true
	}
	for _, t := range p.Spec.PolicyTemplates {
		if names(t.ExtraDependencies) {
			return true
		}
	}
	return false
}
