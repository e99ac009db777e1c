package workreplicaset

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// maxHashCollisions bounds the names tried for a new revision whose hash
// names another revision of different data.
const maxHashCollisions = 10

// revisionDataOf is the part of a replica set's spec a revision keeps.
func revisionDataOf(spec *workv1alpha1.ManifestWorkReplicaSetSpec) workv1alpha1.RevisionData {
	return workv1alpha1.RevisionData{ManifestWorkTemplate: spec.ManifestWorkTemplate, Overrides: spec.Overrides, ReplicaDivision: spec.ReplicaDivision}
}

// canonicalJSON encodes v with the keys of every object sorted and no
// spacing, so that data the API server re-encoded (the manifests' raw
// bytes) encodes as the replica set's spec does.
func canonicalJSON(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	return json.Marshal(doc)
}

// revisionOf decodes a revision's data.
func revisionOf(cr *appsv1.ControllerRevision) (workv1alpha1.RevisionData, error) {
	var d workv1alpha1.RevisionData
	if err := json.Unmarshal(cr.Data.Raw, &d); err != nil {
		return d, fmt.Errorf("decode the data of ControllerRevision %s/%s: %w", cr.Namespace, cr.Name, err)
	}
	return d, nil
}

// revisionName is the name of a revision of replica set name whose
// canonical data is data; collision counts the names already taken by
// revisions of other data.
func revisionName(name string, data []byte, collision int) string {
	h := fnv.New32a()
	h.Write(data)
	if collision > 0 {
		fmt.Fprintf(h, "/%d", collision)
	}
	suffix := rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
	// A name is at most 253 characters: keep room for "-" and the hash.
	if max := 253 - 1 - len(suffix); len(name) > max {
		name = name[:max]
	}
	return name + "-" + suffix
}

// syncRevisions finds the revision of the replica set's spec, records it
// when it is new (numbered after the others, with its author and a summary
// of what changed) or renumbers it when the spec went back to it (an
// undo: its failed mark is cleared, the user asked for it again), and
// prunes the history to RevisionHistoryLimit. Input that cannot be
// rendered makes no revision.
func (r *Reconciler) syncRevisions(ctx context.Context, s *scope) (ctrl.Result, error) {
	if s.invalid != nil {
		return ctrl.Result{}, nil
	}
	revs, err := r.ownRevisions(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	data := revisionDataOf(&s.mwrs.Spec)
	canon, err := canonicalJSON(data)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("encode the revision data of ManifestWorkReplicaSet %s/%s: %w", s.mwrs.Namespace, s.mwrs.Name, err)
	}
	var cur, last *appsv1.ControllerRevision
	for _, cr := range revs {
		if c, err := canonicalJSON(cr.Data); err == nil && bytes.Equal(c, canon) {
			cur = cr
		}
		last = cr
	}
	switch {
	case cur == nil:
		cur, err = r.createRevision(ctx, s, data, canon, last)
		if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
			s.retry = true
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		if err != nil {
			return ctrl.Result{}, err
		}
		revs = append(revs, cur)
	case cur != last:
		if err := r.renumberRevision(ctx, s, cur, last, data); err != nil {
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				s.retry = true
				return ctrl.Result{RequeueAfter: conflictRetry}, nil
			}
			return ctrl.Result{}, err
		}
		slices.SortFunc(revs, byRevision)
	}
	s.revisions, s.current, s.rendering = revs, cur, cur
	if err := r.pruneRevisions(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

// ownRevisions lists the replica set's revisions from the revisions cache,
// overlaid with this controller's writes the cache does not show yet,
// oldest first. Revisions another replica set of the same name controlled
// (one deleted, whose revisions the garbage collector has not removed
// yet) are not the replica set's.
func (r *Reconciler) ownRevisions(ctx context.Context, s *scope) ([]*appsv1.ControllerRevision, error) {
	list := &appsv1.ControllerRevisionList{}
	if err := r.Revisions.List(ctx, list, client.InNamespace(s.mwrs.Namespace), client.MatchingFields{ownerIndex: s.owner}); err != nil {
		return nil, fmt.Errorf("list the ControllerRevisions of %s: %w", s.owner, err)
	}
	byName := make(map[string]*appsv1.ControllerRevision, len(list.Items))
	for i := range list.Items {
		byName[list.Items[i].Name] = &list.Items[i]
	}
	r.writtenRevisions.overlay(s.owner, byName, s.now)
	out := make([]*appsv1.ControllerRevision, 0, len(byName))
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		cr := byName[name]
		if ref := metav1.GetControllerOf(cr); ref == nil || ref.UID != s.mwrs.UID {
			continue
		}
		out = append(out, cr)
	}
	slices.SortStableFunc(out, byRevision)
	return out, nil
}

func byRevision(a, b *appsv1.ControllerRevision) int {
	switch {
	case a.Revision < b.Revision:
		return -1
	case a.Revision > b.Revision:
		return 1
	}
	return 0
}

// createRevision records data (canon, canonically encoded) as the
// revision after last (nil: the first), with the author of the change and
// a summary of it.
func (r *Reconciler) createRevision(ctx context.Context, s *scope, data workv1alpha1.RevisionData, canon []byte, last *appsv1.ControllerRevision) (*appsv1.ControllerRevision, error) {
	number := int64(1)
	var prev *workv1alpha1.RevisionData
	if last != nil {
		number = last.Revision + 1
		if d, err := revisionOf(last); err == nil {
			prev = &d
		}
	}
	annotations := map[string]string{workv1alpha1.RevisionSummaryAnnotation: changeSummary(prev, &data)}
	if author := s.mwrs.Annotations[workv1alpha1.ChangedByAnnotation]; author != "" {
		annotations[workv1alpha1.RevisionAuthorAnnotation] = author
	}
	for collision := 0; collision < maxHashCollisions; collision++ {
		cr := &appsv1.ControllerRevision{
			ObjectMeta: metav1.ObjectMeta{
				Namespace:       s.mwrs.Namespace,
				Name:            revisionName(s.mwrs.Name, canon, collision),
				Labels:          map[string]string{workv1.ManifestWorkReplicaSetLabel: s.owner},
				Annotations:     annotations,
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(s.mwrs, workv1alpha1.GroupVersion.WithKind("ManifestWorkReplicaSet"))},
			},
			Data:     runtime.RawExtension{Raw: canon},
			Revision: number,
		}
		err := r.Writer.Create(ctx, cr)
		if err == nil {
			klog.FromContext(ctx).Info("Recorded a revision of a ManifestWorkReplicaSet", "manifestWorkReplicaSet", klog.KObj(s.mwrs),
				"revision", number, "controllerRevision", cr.Name, "summary", annotations[workv1alpha1.RevisionSummaryAnnotation])
			r.writtenRevisions.remember(s.owner, cr, s.now)
			return cr, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("create ControllerRevision %s/%s (revision %d of ManifestWorkReplicaSet %s): %w", cr.Namespace, cr.Name, number, s.mwrs.Name, err)
		}
		// Ours, written by an earlier reconcile the cache has not shown
		// yet? Then that is the revision; another's or other data: next name.
		found := &appsv1.ControllerRevision{}
		if err := r.Writer.Get(ctx, client.ObjectKeyFromObject(cr), found); err != nil {
			return nil, fmt.Errorf("get ControllerRevision %s/%s, which exists: %w", cr.Namespace, cr.Name, err)
		}
		ref := metav1.GetControllerOf(found)
		if c, err := canonicalJSON(found.Data); err == nil && bytes.Equal(c, canon) && ref != nil && ref.UID == s.mwrs.UID {
			r.writtenRevisions.remember(s.owner, found, s.now)
			return found, nil
		}
	}
	return nil, fmt.Errorf("record a revision of ManifestWorkReplicaSet %s/%s: %d ControllerRevision names taken by other data; delete stale ControllerRevisions labelled %s=%s",
		s.mwrs.Namespace, s.mwrs.Name, maxHashCollisions, workv1.ManifestWorkReplicaSetLabel, s.owner)
}

// renumberRevision makes cur, an older revision the spec is again (an
// undo), the newest: the number after last's, the author of the change, a
// summary of what changes from last, and no failed mark.
func (r *Reconciler) renumberRevision(ctx context.Context, s *scope, cur, last *appsv1.ControllerRevision, data workv1alpha1.RevisionData) error {
	updated := cur.DeepCopy()
	from := cur.Revision
	updated.Revision = last.Revision + 1
	updated.Annotations = maps.Clone(cur.Annotations)
	if updated.Annotations == nil {
		updated.Annotations = map[string]string{}
	}
	delete(updated.Annotations, workv1alpha1.RevisionFailedAnnotation)
	if prev, err := revisionOf(last); err == nil {
		updated.Annotations[workv1alpha1.RevisionSummaryAnnotation] = changeSummary(&prev, &data)
	}
	if author := s.mwrs.Annotations[workv1alpha1.ChangedByAnnotation]; author != "" {
		updated.Annotations[workv1alpha1.RevisionAuthorAnnotation] = author
	}
	if err := r.Writer.Patch(ctx, updated, client.MergeFromWithOptions(cur, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("renumber ControllerRevision %s/%s from revision %d to %d: %w", cur.Namespace, cur.Name, from, updated.Revision, err)
	}
	klog.FromContext(ctx).Info("The spec of a ManifestWorkReplicaSet went back to an older revision; it is the newest again",
		"manifestWorkReplicaSet", klog.KObj(s.mwrs), "controllerRevision", cur.Name, "from", from, "revision", updated.Revision)
	r.writtenRevisions.remember(s.owner, updated, s.now)
	*cur = *updated
	return nil
}

// pruneRevisions deletes the oldest revisions beyond
// RevisionHistoryLimit, but never the current one or the last complete one
// before it (what a rollback goes back to).
func (r *Reconciler) pruneRevisions(ctx context.Context, s *scope) error {
	excess := len(s.revisions) - workv1alpha1.RevisionHistoryLimit
	if excess <= 0 {
		return nil
	}
	keep := map[*appsv1.ControllerRevision]bool{s.current: true}
	if t := lastCompleteBefore(s.revisions, s.current); t != nil {
		keep[t] = true
	}
	var kept []*appsv1.ControllerRevision
	for _, cr := range s.revisions {
		if excess == 0 || keep[cr] {
			kept = append(kept, cr)
			continue
		}
		if err := r.Writer.Delete(ctx, cr, client.Preconditions{UID: &cr.UID}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete ControllerRevision %s/%s (revision %d), beyond the history limit %d: %w",
				cr.Namespace, cr.Name, cr.Revision, workv1alpha1.RevisionHistoryLimit, err)
		}
		r.writtenRevisions.forgetDeleted(s.owner, cr.Name, s.now)
		excess--
	}
	s.revisions = kept
	return nil
}

// lastCompleteBefore is the newest revision older than cur that was
// complete (rolled out to every chosen cluster and Available on each),
// or nil.
func lastCompleteBefore(revs []*appsv1.ControllerRevision, cur *appsv1.ControllerRevision) *appsv1.ControllerRevision {
	var found *appsv1.ControllerRevision
	for _, cr := range revs {
		if cr.Revision < cur.Revision && cr.Annotations[workv1alpha1.RevisionCompleteAnnotation] != "" {
			found = cr
		}
	}
	return found
}
