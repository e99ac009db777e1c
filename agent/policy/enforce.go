package policy

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/klog/v2"

	"github.com/flotilla-io/flotilla/agent/policy/engine"
	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

// errRace is a change that raced with another writer: the evaluation is
// stale, so it is tried again rather than reported.
var errRace = errors.New("the object changed while the policy was enforced")

// enforce performs the actions of an evaluation and records each outcome
// in it. A conflict means the evaluation read an object that changed
// since: the policy is evaluated again instead of reporting a failure.
func (r *reconciler) enforce(ctx context.Context, res *engine.Result) error {
	logger := klog.FromContext(ctx)
	for _, a := range res.Actions {
		ri := r.resource(a.Mapping.Resource, a.Mapping.Scope, a.Object.GetNamespace())
		var err error
		switch a.Type {
		case engine.ActionCreate:
			obj, cerr := ri.Create(ctx, a.Object, metav1.CreateOptions{FieldManager: FieldManager})
			if apierrors.IsAlreadyExists(cerr) {
				return fmt.Errorf("%s: %w", a, errRace)
			}
			err = cerr
			res.Done(a, obj, err)
		case engine.ActionUpdate:
			obj, uerr := r.update(ctx, ri, a)
			if errors.Is(uerr, errRace) {
				return uerr
			}
			err = uerr
			res.Done(a, obj, err)
		case engine.ActionDelete:
			opts := metav1.DeleteOptions{}
			if uid := a.Object.GetUID(); uid != "" {
				opts.Preconditions = &metav1.Preconditions{UID: &uid}
			}
			err = ri.Delete(ctx, a.Object.GetName(), opts)
			if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
				err = nil // gone already, or replaced by another object: evaluated again on its event
			}
			var still *unstructured.Unstructured
			if err == nil {
				// A deletion counts once the object is gone: finalizers
				// (a Terminating namespace) may hold it.
				still, err = stillThere(ctx, ri, a.Object)
			}
			res.Done(a, still, err)
		}
		if err != nil {
			// Its outcome, not err: the API server's error may quote values of a Secret.
			logger.Info("Cannot enforce the policy", "action", a.String(), "reason", a.Outcome())
		} else {
			logger.V(1).Info("Enforced the policy", "action", a.String())
		}
	}
	return nil
}

// stillThere reads obj again after its deletion was accepted: nil when it
// is gone (or replaced by another of its name).
func stillThere(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	got, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	case obj.GetUID() != "" && got.GetUID() != obj.GetUID():
		return nil, nil
	}
	return got, nil
}

// update patches the object, or deletes and creates it as its
// recreateOption says: Always, or IfRequired when the patch is refused as
// invalid (an immutable field changes).
func (r *reconciler) update(ctx context.Context, ri dynamic.ResourceInterface, a *engine.Action) (*unstructured.Unstructured, error) {
	if a.Recreate != policyv1.RecreateAlways {
		obj, err := ri.Patch(ctx, a.Object.GetName(), types.MergePatchType, a.Patch, metav1.PatchOptions{FieldManager: FieldManager})
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("%s: %w", a, errRace)
		}
		if a.Recreate != policyv1.RecreateIfRequired || !apierrors.IsInvalid(err) {
			return obj, err
		}
	}
	opts := metav1.DeleteOptions{}
	if uid := a.Object.GetUID(); uid != "" {
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	switch err := ri.Delete(ctx, a.Object.GetName(), opts); {
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		return nil, fmt.Errorf("%s: %w", a, errRace)
	case err != nil:
		return nil, err
	}
	fresh := a.Object.DeepCopy()
	for _, f := range []string{"resourceVersion", "uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation", "managedFields", "selfLink"} {
		unstructured.RemoveNestedField(fresh.Object, "metadata", f)
	}
	obj, err := ri.Create(ctx, fresh, metav1.CreateOptions{FieldManager: FieldManager})
	if apierrors.IsAlreadyExists(err) {
		// The old object is still being deleted; its deletion's event
		// evaluates the policy again, which then creates it.
		return nil, fmt.Errorf("%s: %w", a, errRace)
	}
	return obj, err
}

// resource is the dynamic client of gvr in ns.
func (r *reconciler) resource(gvr schema.GroupVersionResource, scope meta.RESTScope, ns string) dynamic.ResourceInterface {
	ri := r.spoke.dynamic.Resource(gvr)
	if scope != nil && scope.Name() == meta.RESTScopeNameNamespace {
		return ri.Namespace(ns)
	}
	return ri
}

// prunedReasons are the reasons of related objects that a template
// manages: those of musthave and mustonlyhave templates. Objects that a
// mustnothave template looked at are never pruned.
var prunedReasons = map[string]bool{
	engine.ReasonFoundAsExpected: true, engine.ReasonFoundNoMatch: true, engine.ReasonCreated: true,
	engine.ReasonUpdated: true, engine.ReasonUpdateError: true,
}

// prune deletes what an enforced template managed when the template is
// removed: with DeleteAll every object it made comply, with
// DeleteIfCreated only those it created (and that were not replaced since).
func (r *reconciler) prune(ctx context.Context, cp *policyv1.ConfigurationPolicy) error {
	behavior := cp.Spec.PruneObjectBehavior
	if behavior != policyv1.PruneDeleteAll && behavior != policyv1.PruneDeleteIfCreated {
		return nil
	}
	var errs []error
	for _, ro := range cp.Status.RelatedObjects {
		created := ro.Properties != nil && ro.Properties.CreatedByPolicy != nil && *ro.Properties.CreatedByPolicy
		if !prunedReasons[ro.Reason] || (behavior == policyv1.PruneDeleteIfCreated && !created) {
			continue
		}
		gv, err := schema.ParseGroupVersion(ro.Object.APIVersion)
		if err != nil {
			continue
		}
		m, err := r.spoke.mapper.RESTMapping(schema.GroupKind{Group: gv.Group, Kind: ro.Object.Kind}, gv.Version)
		if err != nil {
			if meta.IsNoMatchError(err) {
				continue // its kind is gone, and so is the object
			}
			errs = append(errs, err)
			continue
		}
		opts := metav1.DeleteOptions{}
		if behavior == policyv1.PruneDeleteIfCreated && ro.Properties.UID != "" {
			uid := types.UID(ro.Properties.UID)
			opts.Preconditions = &metav1.Preconditions{UID: &uid}
		}
		err = r.resource(m.Resource, m.Scope, ro.Object.Metadata.Namespace).Delete(ctx, ro.Object.Metadata.Name, opts)
		switch {
		case err == nil:
			klog.FromContext(ctx).Info("Pruned an object of a removed policy template", "template", cp.Name,
				"kind", ro.Object.Kind, "object", klog.KRef(ro.Object.Metadata.Namespace, ro.Object.Metadata.Name))
		case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		default:
			errs = append(errs, fmt.Errorf("prune %s %s: %w", ro.Object.Kind, ro.Object.Metadata.Name, err))
		}
	}
	return errors.Join(errs...)
}
