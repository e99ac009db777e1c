package work

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// applyResult is what a pass did with one manifest.
type applyResult struct {
	// live is the object after the pass; nil when it does not exist or the
	// pass reused an earlier one's status (cached).
	live *unstructured.Unstructured
	// err says why the manifest could not be applied.
	err error
	// readErr says why the object could not be read.
	readErr error
	// owned says the object is the work's: the agent created, updated or
	// adopted it, and it carries the AppliedManifestWork's ownerReference.
	owned bool
	// drift is set when the object had drifted from its manifest.
	drift *drift
	// cached is the status of an earlier pass, which stands because
	// neither the object nor the work changed since.
	cached *workv1.ManifestCondition
	// heldBy is the work that holds the object, when another than this
	// one: the pass did not write it (see held).
	heldBy *holder
}

// drift is how an object differed from its manifest.
type drift struct {
	// fields are driftedFields, or workv1.DriftWholeObject for an object
	// that had been deleted.
	fields []string
	// err says why the object could not be put back; nil once it was.
	err error
}

// apply applies the manifests in kind order. A manifest that fails is
// reported and leaves the others alone.
func (r *reconciler) apply(ctx context.Context, s *scope) error {
	if s.refused != "" {
		return nil
	}
	for _, i := range s.order {
		if m := s.manifests[i]; m.invalid == nil {
			m.result = r.applyManifest(ctx, s, m)
		}
	}
	return nil
}

// applyManifest applies one manifest with its update strategy, unless
// neither it nor its object changed since the last pass.
func (r *reconciler) applyManifest(ctx context.Context, s *scope, m *manifest) applyResult {
	st := s.state.manifests[m.key]
	if st != nil && st.hash == m.hash && st.generation == s.work.Generation &&
		r.watcher.current(m.key.GroupVersionResource, m.key.Namespace, m.key.Name, st.resourceVersion) &&
		(st.heldBy == nil || r.watcher.hasApplied(st.heldBy.applied, st.heldBy.uid)) {
		return applyResult{cached: &st.status, owned: st.owned, heldBy: st.heldBy}
	}
	waiting := st != nil && st.heldBy != nil
	if m.strategy != workv1.UpdateStrategyTypeReadOnly && !isComplete(s.previous(m)) && !waiting && r.watcher.absent(m.key.GroupVersionResource, m.key.Namespace, m.key.Name) {
		// Most likely a new object: create it without reading it first.
		if res := r.create(ctx, s, m); !apierrors.IsAlreadyExists(errors.Unwrap(res.err)) {
			r.watcher.watch(m.key.GroupVersionResource)
			return res
		}
	}
	live, err := r.resource(m.key).Get(ctx, m.key.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		live = nil
	case err != nil:
		return applyResult{err: fmt.Errorf("read %s: %w", describe(m.key), err), readErr: err}
	}
	var res applyResult
	if adopts := m.strategy == workv1.UpdateStrategyTypeUpdate || m.strategy == workv1.UpdateStrategyTypeServerSideApply; adopts && !isComplete(s.previous(m)) {
		if held, ok := r.held(ctx, s, m, live); ok {
			if held.owned {
				r.watcher.watch(m.key.GroupVersionResource)
			}
			return held
		}
	}
	switch {
	case m.strategy == workv1.UpdateStrategyTypeReadOnly:
		res = applyResult{live: live}
	case isComplete(s.previous(m)):
		// A finished object is no longer updated, nor re-created.
		res = applyResult{live: live, owned: live != nil && hasOwner(live, s.applied.UID)}
	case m.strategy == workv1.UpdateStrategyTypeCreateOnly:
		res = r.createOnly(ctx, s, m, live)
	case m.strategy == workv1.UpdateStrategyTypeServerSideApply:
		res = r.serverSideApply(ctx, s, m, live)
	case m.strategy == workv1.UpdateStrategyTypeUpdate:
		res = r.update(ctx, s, m, live)
	default:
		res = applyResult{live: live, err: fmt.Errorf("unknown update strategy %q: use Update, ServerSideApply, CreateOnly or ReadOnly", m.strategy)}
	}
	if res.owned {
		r.watcher.watch(m.key.GroupVersionResource)
	}
	return res
}

// createOnly creates the object when it is missing and never updates it.
func (r *reconciler) createOnly(ctx context.Context, s *scope, m *manifest, live *unstructured.Unstructured) applyResult {
	if live != nil {
		return applyResult{live: live, owned: hasOwner(live, s.applied.UID)}
	}
	return r.create(ctx, s, m)
}

// create creates the object. An object the work had applied before was
// deleted on the spoke: creating it again puts it back.
func (r *reconciler) create(ctx context.Context, s *scope, m *manifest) applyResult {
	var d *drift
	if s.wasApplied(m) {
		d = &drift{fields: []string{workv1.DriftWholeObject}}
	}
	obj := r.desired(s, m)
	addOwner(obj, s.applied)
	created, err := r.resource(m.key).Create(ctx, obj, metav1.CreateOptions{FieldManager: workv1.DefaultFieldManager})
	if err != nil {
		if d != nil {
			d.err = err
		}
		return applyResult{err: fmt.Errorf("create %s: %w", describe(m.key), err), drift: d}
	}
	return applyResult{live: created, owned: true, drift: d}
}

// driftOf says how live differs from want, the manifest as applied, when
// it is the same manifest that the agent applied before; a manifest that
// changed since is an update, not a drift.
func (r *reconciler) driftOf(s *scope, m *manifest, live *unstructured.Unstructured, want map[string]any) *drift {
	if contains(want, live.Object) {
		return nil
	}
	// The state of a manifest that waited for another work is not what
	// this work applied: taking the object over is an update.
	st := s.state.manifests[m.key]
	if live.GetAnnotations()[hashAnnotation] != m.hash && (st == nil || st.hash != m.hash || st.heldBy != nil) {
		return nil
	}
	return &drift{fields: driftedFields(want, live.Object)}
}

// desired is the manifest as the agent applies it: marked with the
// agent's label and the manifest's hash. The owner is added separately,
// since comparisons leave it out.
func (r *reconciler) desired(_ *scope, m *manifest) *unstructured.Unstructured {
	u := m.desired.DeepCopy()
	l := u.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	l[AgentLabel] = r.agentKey
	u.SetLabels(l)
	a := u.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[hashAnnotation] = m.hash
	u.SetAnnotations(a)
	return u
}

// resource is the dynamic client of k's resource and namespace.
func (r *reconciler) resource(k objectKey) dynamic.ResourceInterface {
	if k.Namespace == "" {
		return r.spoke.dynamic.Resource(k.GroupVersionResource)
	}
	return r.spoke.dynamic.Resource(k.GroupVersionResource).Namespace(k.Namespace)
}

// wasApplied says whether the AppliedManifestWork records m's object as
// applied (and not as being deleted).
func (s *scope) wasApplied(m *manifest) bool {
	id := m.key.identity()
	for _, e := range s.applied.Status.AppliedResources {
		if e.ResourceIdentifier == id && e.UID == "" {
			return true
		}
	}
	return false
}

// ownerRef is the ownerReference of what the work applied: never a
// controller, so that it adds to the owners an object already has.
func ownerRef(a *workv1.AppliedManifestWork) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: workv1.GroupVersion.String(), Kind: "AppliedManifestWork", Name: a.Name, UID: a.UID}
}

// hasOwner says whether obj names uid among its owners.
func hasOwner(obj metav1.Object, uid types.UID) bool {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.UID == uid {
			return true
		}
	}
	return false
}

// addOwner adds the AppliedManifestWork to obj's owners.
func addOwner(obj *unstructured.Unstructured, a *workv1.AppliedManifestWork) {
	if !hasOwner(obj, a.UID) {
		obj.SetOwnerReferences(append(obj.GetOwnerReferences(), ownerRef(a)))
	}
}
