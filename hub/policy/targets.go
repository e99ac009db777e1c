package policy

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	policyv1beta1 "github.com/flotilla-io/flotilla/api/policy/v1beta1"
	"github.com/flotilla-io/flotilla/hub/failover"
)

// bindsPlacement reports whether b places its subjects with Placement name.
func bindsPlacement(b *policyv1.PlacementBinding, name string) bool {
	ref := b.PlacementRef
	return ref.Kind == policyv1.PlacementKind && (ref.APIGroup == "" || ref.APIGroup == policyv1.PlacementAPIGroup) &&
		ref.Name == name && b.SubFilter != policyv1.Restricted
}

// targetSet is what the Placements of a root chose.
type targetSet struct {
	// placements are the bindings that place the root, sorted by binding name.
	placements []policyv1.Placement
	// clusters are the clusters chosen, sorted.
	clusters []string
	// decided is the oldest of the Placements' last decisions (zero when
	// unknown), and grace the longest of their failover graces: a copy
	// kept for failover stays until every Placement has had its say.
	decided time.Time
	grace   time.Duration
}

// targets finds the bindings that place root, and the clusters their
// Placements chose.
func (r *Reconciler) targets(ctx context.Context, root *policyv1.Policy) (targetSet, error) {
	var ts targetSet
	bindings := &policyv1.PlacementBindingList{}
	if err := r.Client.List(ctx, bindings, client.InNamespace(root.Namespace)); err != nil {
		return ts, fmt.Errorf("list PlacementBindings in %s: %w", root.Namespace, err)
	}
	chosen := map[string]bool{}
	graces := map[string]time.Duration{}
	first := true
	for i := range bindings.Items {
		b := &bindings.Items[i]
		if !bindsPlacement(b, b.PlacementRef.Name) {
			continue
		}
		via, ok, err := r.bindingSubject(ctx, b, root.Name)
		if err != nil {
			return ts, err
		}
		if !ok {
			continue
		}
		decided, decidedAt, err := r.decidedClusters(ctx, root.Namespace, b.PlacementRef.Name)
		if err != nil {
			return ts, err
		}
		for _, c := range decided {
			chosen[c] = true
		}
		if first || decidedAt.Before(ts.decided) {
			ts.decided, first = decidedAt, false
		}
		if _, seen := graces[b.PlacementRef.Name]; !seen {
			if graces[b.PlacementRef.Name], err = r.failoverGrace(ctx, root.Namespace, b.PlacementRef.Name); err != nil {
				return ts, err
			}
		}
		ts.placements = append(ts.placements, policyv1.Placement{PlacementBinding: b.Name, Placement: b.PlacementRef.Name, PolicySet: via})
	}
	slices.SortFunc(ts.placements, func(a, b policyv1.Placement) int {
		if a.PlacementBinding != b.PlacementBinding {
			return strings.Compare(a.PlacementBinding, b.PlacementBinding)
		}
		return strings.Compare(a.PolicySet, b.PolicySet)
	})
	ts.clusters = slices.Sorted(maps.Keys(chosen))
	ts.grace = failover.DefaultGrace
	if len(graces) > 0 {
		ts.grace = slices.Max(slices.Collect(maps.Values(graces)))
	}
	return ts, nil
}

// failoverGrace is the failover grace of Placement ns/name
// (failover.DefaultGrace when it is missing or its annotation unreadable,
// which the log says: the replica sets of the Placement report it too).
func (r *Reconciler) failoverGrace(ctx context.Context, ns, name string) (time.Duration, error) {
	p := &clusterv1beta1.Placement{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
		if apierrors.IsNotFound(err) {
			return failover.DefaultGrace, nil
		}
		return 0, fmt.Errorf("get Placement %s/%s: %w", ns, name, err)
	}
	grace, err := failover.Grace(p)
	if err != nil {
		klog.FromContext(ctx).Info("Cannot read the failover grace of a Placement; the default applies", "placement", klog.KObj(p), "reason", err.Error())
	}
	return grace, nil
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

// decidedClusters lists the clusters in the PlacementDecisions of a
// Placement, and when it last wrote one of them.
func (r *Reconciler) decidedClusters(ctx context.Context, ns, placement string) ([]string, time.Time, error) {
	list := &clusterv1beta1.PlacementDecisionList{}
	if err := r.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{clusterv1beta1.PlacementLabel: placement}); err != nil {
		return nil, time.Time{}, fmt.Errorf("list the PlacementDecisions of %s/%s: %w", ns, placement, err)
	}
	var out []string
	var decided time.Time
	for _, pd := range list.Items {
		if at := failover.DecidedAt(&pd); at.After(decided) {
			decided = at
		}
		for _, d := range pd.Status.Decisions {
			if d.ClusterName != "" {
				out = append(out, d.ClusterName)
			}
		}
	}
	return out, decided, nil
}
