package work

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// Reasons of a manifest's Applied=False condition while another work holds
// its object, in the form of the manifest's update strategy.
const (
	// ReasonAppliedByAnotherWork is the reason with the Update strategy.
	ReasonAppliedByAnotherWork = "AppliedByAnotherWork"
	// ReasonApplyConflict is the reason with the ServerSideApply strategy,
	// OCM's reason for a server-side apply conflict.
	ReasonApplyConflict = "ApplyConflict"
)

// holder is the work that holds an object which another work applies too:
// the one whose AppliedManifestWork comes first among the object's owners.
type holder struct {
	// applied and uid name its AppliedManifestWork.
	applied string
	uid     types.UID
	// work and cluster name its ManifestWork; otherHub says it is another
	// hub's.
	work, cluster string
	otherHub      bool
}

func (h *holder) String() string {
	s := fmt.Sprintf("ManifestWork %s/%s of cluster %s", h.cluster, h.work, h.cluster)
	if h.otherHub {
		s += " of another hub"
	}
	return s
}

// held says whether another work holds m's object, and if so what the
// pass did instead of applying it. Two works that apply one object would
// otherwise overwrite each other for ever: the work that applied it first
// keeps it, and the others wait, writing nothing but their own
// ownerReference, until it lets go (its work deleted, or the manifest
// removed), as OCM keeps an object while any owner remains.
func (r *reconciler) held(ctx context.Context, s *scope, m *manifest, live *unstructured.Unstructured) (applyResult, bool) {
	if live == nil {
		// Deleted on the spoke: the holder puts it back, while it still
		// records it.
		st := s.state.manifests[m.key]
		if st == nil || st.heldBy == nil {
			return applyResult{}, false
		}
		holds, err := r.stillHolds(ctx, st.heldBy, m)
		if err != nil {
			return applyResult{err: err, readErr: err}, true
		}
		if !holds {
			return applyResult{}, false
		}
		return applyResult{heldBy: st.heldBy}, true
	}
	h, err := r.holderOf(ctx, s, live)
	if err != nil {
		return applyResult{live: live, err: err}, true
	}
	if h == nil {
		return applyResult{}, false
	}
	if hasOwner(live, s.applied.UID) {
		return applyResult{live: live, owned: true, heldBy: h}, true
	}
	claimed, err := r.claim(ctx, m, live, s.applied)
	if err != nil {
		return applyResult{live: live, err: err}, true
	}
	return applyResult{live: claimed, owned: true, heldBy: h}, true
}

// holderOf returns the work that holds obj when it is another than s's:
// the first AppliedManifestWork among obj's owners that still exists. It
// returns nil when s's work comes first, or no work owns obj.
func (r *reconciler) holderOf(ctx context.Context, s *scope, obj metav1.Object) (*holder, error) {
	for _, ref := range obj.GetOwnerReferences() {
		if !isAppliedOwner(ref) {
			continue
		}
		if ref.UID == s.applied.UID {
			return nil, nil
		}
		h, err := r.lookupHolder(ctx, ref)
		if err != nil || h != nil {
			return h, err
		}
		// A reference left behind by a record that is gone.
	}
	return nil, nil
}

// lookupHolder names the work of the AppliedManifestWork ref names, or
// returns nil when that record is gone. A record of this agent is found in
// the watch, any other is read.
func (r *reconciler) lookupHolder(ctx context.Context, ref metav1.OwnerReference) (*holder, error) {
	if name, ok := workName(r.hubHash, ref.Name); ok && r.watcher.hasApplied(ref.Name, ref.UID) {
		return &holder{applied: ref.Name, uid: ref.UID, work: name, cluster: r.cfg.ClusterName}, nil
	}
	a := &workv1.AppliedManifestWork{}
	err := r.spoke.applied.Get(ctx, client.ObjectKey{Name: ref.Name}, a)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read AppliedManifestWork %s, an owner of the object: %w", ref.Name, err)
	case a.UID != ref.UID:
		return nil, nil
	}
	return &holder{applied: a.Name, uid: a.UID, work: a.Spec.ManifestWorkName, cluster: a.Labels[clusterv1.ClusterNameLabel], otherHub: a.Spec.HubHash != r.hubHash}, nil
}

// stillHolds says whether h's AppliedManifestWork still records m's
// object, so that its work will put a deleted object back.
func (r *reconciler) stillHolds(ctx context.Context, h *holder, m *manifest) (bool, error) {
	a := &workv1.AppliedManifestWork{}
	err := r.spoke.applied.Get(ctx, client.ObjectKey{Name: h.applied}, a)
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("read AppliedManifestWork %s, which held %s: %w", h.applied, describe(m.key), err)
	case a.UID != h.uid || !a.DeletionTimestamp.IsZero():
		return false, nil
	}
	id := m.key.identity()
	for _, e := range a.Status.AppliedResources {
		if e.ResourceIdentifier == id && e.UID == "" {
			return true, nil
		}
	}
	return false, nil
}

// claim adds a's ownerReference, and nothing else, to live, which another
// work holds: its deletion then keeps the object for this work, which
// takes it over, instead of deleting it. The patch fails if live changed
// since it was read.
func (r *reconciler) claim(ctx context.Context, m *manifest, live *unstructured.Unstructured, a *workv1.AppliedManifestWork) (*unstructured.Unstructured, error) {
	refs := append(live.GetOwnerReferences(), ownerRef(a))
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": live.GetResourceVersion(), "ownerReferences": refs}})
	if err != nil {
		return nil, err
	}
	claimed, err := r.resource(m.key).Patch(ctx, m.key.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: workv1.DefaultFieldManager})
	if err != nil {
		return nil, fmt.Errorf("add the ownerReference of AppliedManifestWork %s to %s: %w", a.Name, describe(m.key), err)
	}
	return claimed, nil
}

// heldCondition is the Applied=False reason and message of manifest m
// while h holds its object.
func heldCondition(m *manifest, h *holder) (reason, msg string) {
	msg = fmt.Sprintf("%s is applied by %s, which applied it first; this work does not write it, and applies it once that work lets go of it (is deleted, or drops the manifest)", describe(m.key), h)
	if m.strategy == workv1.UpdateStrategyTypeServerSideApply {
		return ReasonApplyConflict, "Apply conflict: " + msg
	}
	return ReasonAppliedByAnotherWork, "Not applied: " + msg
}
