package placement

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/hub/placement/scheduler"
)

// writeDecisions brings the placement's PlacementDecisions in line with
// the result: it creates the missing ones, updates those that differ, and
// deletes those no longer wanted. A misconfigured placement keeps its own.
func (r *Reconciler) writeDecisions(ctx context.Context, s *scope) (ctrl.Result, error) {
	if s.result.Misconfigured != nil {
		return ctrl.Result{}, nil
	}
	p := s.placement
	own, err := r.ownDecisions(ctx, p)
	if err != nil {
		return ctrl.Result{}, err
	}
	existing := make(map[string]*clusterv1beta1.PlacementDecision, len(own))
	for i := range own {
		existing[own[i].Name] = &own[i]
	}
	for _, want := range s.result.PlacementDecisions {
		if err := r.writeDecision(ctx, p, existing[want.Name], want); err != nil {
			return ctrl.Result{}, err
		}
		delete(existing, want.Name)
	}
	for _, name := range slices.Sorted(maps.Keys(existing)) {
		if err := r.Client.Delete(ctx, existing[name]); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("delete PlacementDecision %s/%s: %w", p.Namespace, name, err)
		}
	}
	if added, removed := changes(s.previous, s.result.Decisions); len(added)+len(removed) > 0 {
		s.events.Add(corev1.EventTypeNormal, reasonDecisionUpdate, "Schedule", "%d clusters selected%s%s",
			len(s.result.Decisions), listNote("added", added), listNote("removed", removed))
	}
	return ctrl.Result{}, nil
}

// writeDecision creates or updates one PlacementDecision; cur is nil when
// it does not exist yet.
func (r *Reconciler) writeDecision(ctx context.Context, p *clusterv1beta1.Placement, cur *clusterv1beta1.PlacementDecision, want scheduler.DecisionSlice) error {
	if cur == nil {
		cur = &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: want.Name, Labels: want.Labels(p.Name)}}
		if err := controllerutil.SetControllerReference(p, cur, r.Scheme); err != nil {
			return err
		}
		if err := r.Client.Create(ctx, cur); err != nil {
			return fmt.Errorf("create PlacementDecision %s/%s: %w", p.Namespace, want.Name, err)
		}
	}
	before := cur.DeepCopy()
	if cur.Labels == nil {
		cur.Labels = map[string]string{}
	}
	maps.Copy(cur.Labels, want.Labels(p.Name))
	if err := controllerutil.SetControllerReference(p, cur, r.Scheme); err != nil {
		return err
	}
	if !equality.Semantic.DeepEqual(before.ObjectMeta, cur.ObjectMeta) {
		if err := r.Client.Patch(ctx, cur, client.MergeFrom(before)); err != nil {
			return fmt.Errorf("patch PlacementDecision %s/%s: %w", p.Namespace, want.Name, err)
		}
		before = cur.DeepCopy()
	}
	if equality.Semantic.DeepEqual(cur.Status.Decisions, want.Decisions) && cur.Status.Decisions != nil {
		return nil
	}
	cur.Status.Decisions = want.Decisions
	if err := r.Client.Status().Patch(ctx, cur, client.MergeFrom(before)); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("PlacementDecision %s/%s was deleted while being written: %w", p.Namespace, want.Name, err)
		}
		return fmt.Errorf("patch status of PlacementDecision %s/%s: %w", p.Namespace, want.Name, err)
	}
	return nil
}

// changes lists the clusters added to and removed from the previous decisions.
func changes(previous sets.Set[string], decisions []clusterv1beta1.ClusterDecision) (added, removed []string) {
	now := make(map[string]bool, len(decisions))
	for _, d := range decisions {
		now[d.ClusterName] = true
		if _, ok := previous[d.ClusterName]; !ok {
			added = append(added, d.ClusterName)
		}
	}
	for name := range previous {
		if !now[name] {
			removed = append(removed, name)
		}
	}
	slices.Sort(added)
	slices.Sort(removed)
	return added, removed
}

// maxListed bounds the cluster names an event message lists.
const maxListed = 10

func listNote(what string, names []string) string {
	if len(names) == 0 {
		return ""
	}
	shown := names[:min(len(names), maxListed)]
	more := ""
	if len(names) > maxListed {
		more = fmt.Sprintf(" and %d more", len(names)-maxListed)
	}
	return fmt.Sprintf("; %s %s%s", what, strings.Join(shown, ", "), more)
}
