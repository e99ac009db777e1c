package template

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/internal/addon"
)

// Reconciler runs template add-ons on one ManagedClusterAddOn at a time.
type Reconciler struct {
	// Client reads the add-on objects from the manager's cache and writes.
	Client client.Client
	// Works reads the add-ons' ManifestWorks (label AddOnNameLabel).
	Works client.Reader
	// wrote holds, per ManagedClusterAddOn, the resource version of the
	// status this controller wrote last when a pass over it would find
	// nothing more to do, so that its own write's event is no pass
	// (ownWrite).
	wrote sync.Map // types.NamespacedName → string
}

// state is one pass over one ManagedClusterAddOn.
type state struct {
	// observed is the MCA as read; mca is changed by the phases and its
	// status written once at the end.
	observed, mca *addonv1alpha1.ManagedClusterAddOn
	cluster       *clusterv1.ManagedCluster
	tmpl          *addonv1alpha1.AddOnTemplate
	config        *addonv1alpha1.AddOnDeploymentConfigSpec
	objs          []object
	renderErr     error
	namespace     string
	// works are the add-on's works in the cluster namespace, by name.
	works  map[string]*workv1.ManifestWork
	deploy []*workv1.ManifestWork
	hook   *workv1.ManifestWork
	// written are the works this pass created or updated: their status
	// in works is not theirs yet.
	written map[string]bool
	// releaseFinalizer: the pre-delete hook completed, drop the finalizer
	// after the status write.
	releaseFinalizer bool
	requeue          time.Duration
}

// Reconcile syncs one ManagedClusterAddOn of a template add-on.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	if err := r.Client.Get(ctx, req.NamespacedName, mca); err != nil {
		if apierrors.IsNotFound(err) {
			r.wrote.Delete(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	cma := &addonv1alpha1.ClusterManagementAddOn{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: mca.Name}, cma); apierrors.IsNotFound(err) {
		cma = nil
	} else if err != nil {
		return ctrl.Result{}, err
	}
	if !IsTemplateAddOn(cma) && !slices.Contains(mca.Finalizers, addon.PreDeleteHookFinalizer) {
		return ctrl.Result{}, nil
	}
	s := &state{observed: mca, mca: mca.DeepCopy(), written: map[string]bool{}}
	err := r.sync(ctx, s)
	if !equality.Semantic.DeepEqual(s.observed.Status, s.mca.Status) {
		patch := client.MergeFromWithOptions(s.observed, client.MergeFromWithOptimisticLock{})
		if perr := r.Client.Status().Patch(ctx, s.mca, patch); perr != nil {
			if apierrors.IsConflict(perr) {
				// Another writer of this status (the add-on manager, the
				// agent) was first: again with what it wrote.
				return ctrl.Result{RequeueAfter: 100 * time.Millisecond}, nil
			}
			return ctrl.Result{}, errors.Join(err, fmt.Errorf("write the status of ManagedClusterAddOn %s: %w", req, client.IgnoreNotFound(perr)))
		}
		if awaitsOwnStatus(s.mca) {
			r.wrote.Delete(req.NamespacedName)
		} else {
			r.wrote.Store(req.NamespacedName, s.mca.ResourceVersion)
		}
	}
	if err == nil && s.releaseFinalizer {
		err = r.setFinalizer(ctx, s, false)
	}
	if quiet(err) {
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	return ctrl.Result{RequeueAfter: s.requeue}, err
}

// awaitsOwnStatus says whether the next pass over mca, as this controller
// wrote it, has more to do: grant the hub permissions to the subject this
// pass wrote (RegistrationApplied=False PermissionConfigPending, which the
// contract says for one pass).
func awaitsOwnStatus(mca *addonv1alpha1.ManagedClusterAddOn) bool {
	c := meta.FindStatusCondition(mca.Status.Conditions, addon.ConditionRegistrationApplied)
	return c != nil && c.Reason == ReasonPermissionConfigPending && kubeClientSubject(mca) != nil
}

// ownWrite says whether mca is, to its resource version, the status this
// controller wrote last with nothing left for a pass over it to do: the
// pass that wrote it computed it from the same inputs, and the other
// inputs (cluster, works, template, configs) enqueue a pass of their own
// when they change.
func (r *Reconciler) ownWrite(mca *addonv1alpha1.ManagedClusterAddOn) bool {
	rv, ok := r.wrote.Load(types.NamespacedName{Namespace: mca.Namespace, Name: mca.Name})
	return ok && rv == mca.ResourceVersion
}

// quiet errors come from a cache that lags this controller's own writes.
func quiet(err error) bool {
	return err != nil && (apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err))
}

// sync runs the phases in order; a phase that returns done stops the pass.
func (r *Reconciler) sync(ctx context.Context, s *state) error {
	for _, phase := range []func(context.Context, *state) (done bool, err error){
		r.loadTemplate, r.loadInputs, r.renderManifests, r.registration, r.gateRender,
		r.finalizer, r.deployWorks, r.preDelete, r.health,
	} {
		done, err := phase(ctx, s)
		if err != nil || done {
			return err
		}
	}
	return nil
}

// IsTemplateAddOn says whether cma's add-on is an AddOnTemplate add-on:
// its supported configs include addontemplates.
func IsTemplateAddOn(cma *addonv1alpha1.ClusterManagementAddOn) bool {
	if cma == nil {
		return false
	}
	for _, c := range cma.Spec.SupportedConfigs {
		if c.Group == addon.Group && c.Resource == addon.ConfigResourceTemplates {
			return true
		}
	}
	return false
}

// desired returns mca's desired config of resource, nil when none.
func desired(mca *addonv1alpha1.ManagedClusterAddOn, resource string) *addonv1alpha1.ConfigSpecHash {
	for _, ref := range mca.Status.ConfigReferences {
		if ref.Group == addon.Group && ref.Resource == resource && ref.DesiredConfig != nil && ref.DesiredConfig.Name != "" {
			return ref.DesiredConfig
		}
	}
	return nil
}

// loadTemplate writes the supported configs and reads the template the
// manager chose (status.configReferences, with a spec hash). Without one
// there is nothing more to do.
func (r *Reconciler) loadTemplate(ctx context.Context, s *state) (bool, error) {
	if s.mca.DeletionTimestamp == nil {
		s.mca.Status.SupportedConfigs = []addonv1alpha1.ConfigGroupResource{
			{Group: addon.Group, Resource: addon.ConfigResourceDeploymentConfigs},
			{Group: addon.Group, Resource: addon.ConfigResourceTemplates},
		}
	}
	ref := desired(s.mca, addon.ConfigResourceTemplates)
	if ref == nil || ref.SpecHash == "" {
		if s.mca.DeletionTimestamp != nil {
			// No template, no hook to run.
			s.releaseFinalizer = slices.Contains(s.mca.Finalizers, addon.PreDeleteHookFinalizer)
		}
		return true, nil
	}
	s.tmpl = &addonv1alpha1.AddOnTemplate{}
	err := r.Client.Get(ctx, client.ObjectKey{Name: ref.Name}, s.tmpl)
	switch {
	case apierrors.IsNotFound(err):
		s.renderErr = fmt.Errorf("AddOnTemplate %s, the add-on's template in status.configReferences, does not exist: create it, or point the ClusterManagementAddOn's default config at one that does", ref.Name)
	case err != nil:
		return false, err
	case s.tmpl.Spec.AddonName != s.mca.Name:
		s.renderErr = fmt.Errorf("AddOnTemplate %s is the template of add-on %q (spec.addonName), not of %q: configure add-on %s with a template of its own", ref.Name, s.tmpl.Spec.AddonName, s.mca.Name, s.mca.Name)
	}
	if s.renderErr != nil {
		s.tmpl = nil
	}
	return false, nil
}

// loadInputs reads the cluster and the AddOnDeploymentConfig in effect.
func (r *Reconciler) loadInputs(ctx context.Context, s *state) (bool, error) {
	s.cluster = &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: s.mca.Namespace}, s.cluster); err != nil {
		// The namespace of no cluster: nothing is deployed there.
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	}
	works := &workv1.ManifestWorkList{}
	if err := r.Works.List(ctx, works, client.InNamespace(s.mca.Namespace), client.MatchingLabels{addon.AddOnNameLabel: s.mca.Name}); err != nil {
		return false, fmt.Errorf("list the works of add-on %s: %w", s.mca.Name, err)
	}
	s.works = map[string]*workv1.ManifestWork{}
	for i := range works.Items {
		s.works[works.Items[i].Name] = &works.Items[i]
	}
	ref := desired(s.mca, addon.ConfigResourceDeploymentConfigs)
	if ref == nil || s.renderErr != nil {
		return false, nil
	}
	adc := &addonv1alpha1.AddOnDeploymentConfig{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, adc)
	switch {
	case apierrors.IsNotFound(err):
		s.renderErr = fmt.Errorf("AddOnDeploymentConfig %s/%s, in status.configReferences, does not exist: create it, or remove it from the add-on's configs", ref.Namespace, ref.Name)
	case err != nil:
		return false, err
	default:
		s.config = &adc.Spec
	}
	return false, nil
}

// renderManifests renders the template for this cluster; a failure is
// kept for gateRender, after the registration is written.
func (r *Reconciler) renderManifests(_ context.Context, s *state) (bool, error) {
	s.namespace = s.mca.Spec.InstallNamespace
	if s.namespace == "" {
		s.namespace = addon.DefaultInstallNamespace
	}
	if s.renderErr != nil || s.tmpl == nil {
		return false, nil
	}
	mirrors, err := clusterRegistries(s.cluster.Annotations)
	if err != nil {
		s.renderErr = fmt.Errorf("ManagedCluster %s: %w", s.cluster.Name, err)
		return false, nil
	}
	in := renderInput{addOn: s.mca.Name, cluster: s.cluster.Name, template: s.tmpl, config: s.config, clusterRegistries: mirrors, namespace: s.namespace}
	s.objs, s.namespace, s.renderErr = renderAll(in)
	if s.renderErr == nil {
		s.deploy, s.hook, s.renderErr = buildWorks(s.mca, s.tmpl, s.objs)
	}
	return false, nil
}

// gateRender stops the pass on a template that does not render, saying
// why in ManifestApplied: no work is created or changed.
func (r *Reconciler) gateRender(_ context.Context, s *state) (bool, error) {
	if s.renderErr == nil {
		return false, nil
	}
	if s.mca.DeletionTimestamp != nil {
		meta.SetStatusCondition(&s.mca.Status.Conditions, metav1.Condition{
			Type: addon.ConditionHookManifestCompleted, Status: metav1.ConditionFalse, Reason: ReasonHookNotCompleted,
			ObservedGeneration: s.mca.Generation, Message: "the pre-delete hook cannot run: " + s.renderErr.Error(),
		})
		return true, nil
	}
	meta.SetStatusCondition(&s.mca.Status.Conditions, metav1.Condition{
		Type: addon.ConditionManifestApplied, Status: metav1.ConditionFalse, Reason: ReasonManifestApplyFailed,
		ObservedGeneration: s.mca.Generation, Message: "nothing was applied: " + s.renderErr.Error(),
	})
	return true, nil
}

// setFinalizer adds or removes the pre-delete finalizer (and drops the
// finalizers of older OCM releases). It patches a copy, so that the status
// the phases compute stays, and takes the new resource version into both
// the observed and the changed object.
func (r *Reconciler) setFinalizer(ctx context.Context, s *state, want bool) error {
	finalizers := slices.DeleteFunc(slices.Clone(s.observed.Finalizers), func(f string) bool {
		return f == addon.PreDeleteHookFinalizer || slices.Contains(oldPreDeleteFinalizers, f)
	})
	if want {
		finalizers = append(finalizers, addon.PreDeleteHookFinalizer)
	}
	if slices.Equal(finalizers, s.observed.Finalizers) {
		return nil
	}
	obj := s.observed.DeepCopy()
	obj.Finalizers = finalizers
	if err := r.Client.Patch(ctx, obj, client.MergeFromWithOptions(s.observed, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("set the finalizers of ManagedClusterAddOn %s/%s: %w", obj.Namespace, obj.Name, client.IgnoreNotFound(err))
	}
	for _, m := range []*addonv1alpha1.ManagedClusterAddOn{s.observed, s.mca} {
		m.Finalizers, m.ResourceVersion = finalizers, obj.ResourceVersion
	}
	return nil
}
