package console

import (
	"context"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/cmdutil/workview"
)

// revisionsData is the rollout view's revisions: newest first, with the
// RolledBack condition that speaks of the current one.
type revisionsData struct {
	Revisions []workview.Revision
	// Note says why they are not shown (RBAC, an error); empty when they are.
	Note       string
	RolledBack *metav1.Condition
	// Commands are the equivalent commands shown beside them.
	History, Undo string
}

// revisionsOf reads the revisions of m now, with the caller's credentials
// (the console keeps no informer of ControllerRevisions: the hub holds
// those of every kind of controller, and they change with the rollout's
// spec only), counting the works that carry each.
func (s *server) revisionsOf(ctx context.Context, m *workv1alpha1.ManifestWorkReplicaSet, works []workv1.ManifestWork) revisionsData {
	d := revisionsData{RolledBack: workview.RollbackCondition(m),
		History: fmt.Sprintf("flotilla rollout history %s -n %s", m.Name, m.Namespace),
		Undo:    fmt.Sprintf("flotilla rollout undo %s -n %s --to-revision N", m.Name, m.Namespace)}
	crs := &appsv1.ControllerRevisionList{}
	err := s.store.client.List(ctx, crs, client.InNamespace(m.Namespace), client.MatchingLabels{workv1.ManifestWorkReplicaSetLabel: m.Namespace + "." + m.Name})
	switch {
	case apierrors.IsForbidden(err):
		d.Note = "Your hub RBAC does not let you list the ControllerRevisions of namespace " + m.Namespace + ", which hold the revisions."
		return d
	case err != nil:
		d.Note = "The revisions could not be read: " + err.Error()
		return d
	}
	d.Revisions = workview.BuildRevisions(m, crs.Items, works)
	slices.Reverse(d.Revisions)
	if len(d.Revisions) == 0 {
		d.Note = "No revision yet: the hub records one when it rolls the replica set out."
	}
	return d
}

// revisionNumbers maps each revision's name to its number, for the
// timeline's rows.
func revisionNumbers(revs []workview.Revision) map[string]int64 {
	out := make(map[string]int64, len(revs))
	for _, r := range revs {
		out[r.Name] = r.Number
	}
	return out
}
