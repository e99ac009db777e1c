package policy

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	policyv1beta1 "github.com/flotilla-io/flotilla/api/policy/v1beta1"
)

// bindsPlacement reports whether b places its subjects with Placement name.
func bindsPlacement(b *policyv1.PlacementBinding, name string) bool {
	ref := b.PlacementRef
	return ref.Kind == policyv1.PlacementKind && (ref.APIGroup == "" || ref.APIGroup == policyv1.PlacementAPIGroup) &&
		ref.Name == name && b.SubFilter != policyv1.Restricted
}

// targets finds the bindings that place root, and the clusters their
// Placements chose. placements is sorted by binding name.
func (r *Reconciler) targets(ctx context.Context, root *policyv1.Policy) (placements []policyv1.Placement, clusters []string, err error) {
	bindings := &policyv1.PlacementBindingList{}
	if err := r.Client.List(ctx, bindings, client.InNamespace(root.Namespace)); err != nil {
		return nil, nil, fmt.Errorf("list PlacementBindings in %s: %w", root.Namespace, err)
	}
	chosen := map[string]bool{}
	for i := range bindings.Items {
		b := &bindings.Items[i]
		if !bindsPlacement(b, b.PlacementRef.Name) {
			continue
		}
		via, ok, err := r.bindingSubject(ctx, b, root.Name)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			continue
		}
		decided, err := r.decidedClusters(ctx, root.Namespace, b.PlacementRef.Name)
		if err != nil {
			return nil, nil, err
		}
		for _, c := range decided {
			chosen[c] = true
		}
		placements = append(placements, policyv1.Placement{PlacementBinding: b.Name, Placement: b.PlacementRef.Name, PolicySet: via})
	}
	slices.SortFunc(placements, func(a, b policyv1.Placement) int {
		if a.PlacementBinding != b.PlacementBinding {
			return strings.Compare(a.PlacementBinding, b.PlacementBinding)
		}
		return strings.Compare(a.PolicySet, b.PolicySet)
	})
	return placements, slices.Sorted(maps.Keys(chosen)), nil
}

// bindingSubject reports whether b names policy, directly (via "") or
// through a PolicySet that lists it (via its name).
func (r *Reconciler) bindingSubject(ctx context.Context, b *policyv1.PlacementBinding, policy string) (via string, ok bool, err error) {
	for _, s := range b.Subjects {
		if s.Kind == policyv1.PolicyKind && s.Name == policy {
			return "", true, nil
		}
	}
	for _, s := range b.Subjects {
		if s.Kind != policyv1.PolicySetKind {
			continue
		}
		set := &policyv1beta1.PolicySet{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: s.Name}, set); err != nil {
			if client.IgnoreNotFound(err) == nil {
				continue
			}
			return "", false, fmt.Errorf("get PolicySet %s/%s: %w", b.Namespace, s.Name, err)
		}
		if slices.Contains(set.Spec.Policies, policyv1.NonEmptyString(policy)) {
			return set.Name, true, nil
		}
	}
	return "", false, nil
}

// decidedClusters lists the clusters in the PlacementDecisions of a Placement.
func (r *Reconciler) decidedClusters(ctx context.Context, ns, placement string) ([]string, error) {
	list := &clusterv1beta1.PlacementDecisionList{}
	if err := r.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{clusterv1beta1.PlacementLabel: placement}); err != nil {
		return nil, fmt.Errorf("list the PlacementDecisions of %s/%s: %w", ns, placement, err)
	}
	var out []string
	for _, pd := range list.Items {
		for _, d := range pd.Status.Decisions {
			if d.ClusterName != "" {
				out = append(out, d.ClusterName)
			}
		}
	}
	return out, nil
}
