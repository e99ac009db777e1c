package work

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// prune deletes the objects whose manifests left the work. It acts only
// when every manifest was understood: a manifest that failed to decode or
// whose kind discovery missed might name one of them, and deleting a
// workload for a passing discovery error is the one mistake to avoid.
func (r *reconciler) prune(ctx context.Context, s *scope) error {
	if s.applied == nil {
		return nil
	}
	current := s.identities()
	var gone []workv1.AppliedManifestResourceMeta
	for _, e := range s.applied.Status.AppliedResources {
		if !current[e.ResourceIdentifier] {
			gone = append(gone, e)
		}
	}
	for _, m := range s.manifests {
		if m.invalid != nil {
			s.leftover = gone
			return nil
		}
	}
	for _, e := range gone {
		pending, err := r.release(ctx, s.applied, e, false)
		if err != nil {
			klog.FromContext(ctx).Info("Cannot delete an object removed from the work; retrying", "resource", e.Resource, "object", klog.KRef(e.Namespace, e.Name), "reason", err.Error())
			pending = &e
		}
		if pending != nil {
			s.leftover = append(s.leftover, *pending)
			s.requeueAfter(r.cfg.ResyncInterval)
		}
	}
	return nil
}

// release lets go of one object that AppliedManifestWork a applied: it
// deletes it (in the foreground, so that its dependents go first), or
// with orphan set only removes a's ownerReference and the agent's label.
// An object that other works own too only loses a's ownerReference; one
// that a no longer owns is left alone. It returns the entry, with the
// object's UID, while the object is still being deleted, and nil once
// the agent is done with it.
func (r *reconciler) release(ctx context.Context, a *workv1.AppliedManifestWork, e workv1.AppliedManifestResourceMeta, orphan bool) (*workv1.AppliedManifestResourceMeta, error) {
	gvr := schema.GroupVersionResource{Group: e.Group, Version: e.Version, Resource: e.Resource}
	ri := metadataResource(r.spoke.metadata, gvr, e.Namespace)
	obj, err := ri.Get(ctx, e.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	case e.UID != "" && obj.UID != types.UID(e.UID):
		// Deleted, and a new object took the name.
		return nil, nil
	case !obj.DeletionTimestamp.IsZero():
		e.UID = string(obj.UID)
		return &e, nil
	case !hasOwner(obj, a.UID):
		return nil, nil
	}
	others := 0
	for _, ref := range obj.OwnerReferences {
		if isAppliedOwner(ref) && ref.UID != a.UID {
			others++
		}
	}
	if orphan || others > 0 {
		return nil, r.disown(ctx, ri, obj, a, others == 0)
	}
	err = ri.Delete(ctx, e.Name, metav1.DeleteOptions{
		Preconditions:     &metav1.Preconditions{UID: &obj.UID},
		PropagationPolicy: ptr.To(metav1.DeletePropagationForeground),
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return nil, fmt.Errorf("delete %s %s: %w", e.Resource, klog.KRef(e.Namespace, e.Name), err)
	}
	e.UID = string(obj.UID)
	return &e, nil
}

// disown removes a's ownerReference from obj, and the agent's label when
// no other work of this agent owns it, with a patch that fails if obj
// changed since it was read.
func (r *reconciler) disown(ctx context.Context, ri metadata.ResourceInterface, obj *metav1.PartialObjectMetadata, a *workv1.AppliedManifestWork, unlabel bool) error {
	refs := []metav1.OwnerReference{}
	for _, ref := range obj.OwnerReferences {
		if ref.UID != a.UID {
			refs = append(refs, ref)
		}
	}
	md := map[string]any{"resourceVersion": obj.ResourceVersion, "ownerReferences": refs}
	if unlabel {
		md["labels"] = map[string]any{AgentLabel: nil}
	}
	patch, err := json.Marshal(map[string]any{"metadata": md})
	if err != nil {
		return err
	}
	if _, err := ri.Patch(ctx, obj.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("remove the ownerReference of AppliedManifestWork %s from %s: %w", a.Name, klog.KObj(obj), err)
	}
	return nil
}

// metadataResource is the metadata client of gvr in namespace ns ("" for
// cluster-scoped resources).
func metadataResource(c metadata.Interface, gvr schema.GroupVersionResource, ns string) metadata.ResourceInterface {
	if ns == "" {
		return c.Resource(gvr)
	}
	return c.Resource(gvr).Namespace(ns)
}
