package services

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/mcs"
)

// setReconciler writes the imports of one set into the cluster, one
// imported service at a time, from the hub's ImportedServices in store.
type setReconciler struct {
	*importer
	set          string
	hubNamespace string
	store        toolscache.Store
}

// next reconciles the next key of queue; false once queue shuts down.
func (r *setReconciler) next(ctx context.Context, queue workqueue.TypedRateLimitingInterface[string]) bool {
	key, shutdown := queue.Get()
	if shutdown {
		return false
	}
	defer queue.Done(key)
	if err := r.reconcile(ctx, key); err != nil {
		if ctx.Err() == nil {
			klog.FromContext(ctx).Error(err, "Cannot write the import; retrying", "import", key)
		}
		queue.AddRateLimited(key)
		return true
	}
	queue.Forget(key)
	return true
}

// reconcile makes the cluster's import of key what the hub's
// ImportedService says, or removes it when the hub has none.
func (r *setReconciler) reconcile(ctx context.Context, key string) error {
	namespace, name, ok := splitImportKey(key)
	if !ok {
		return nil
	}
	obj, exists, err := r.store.GetByKey(r.hubNamespace + "/" + key)
	if err != nil {
		return err
	}
	var is *mcsv1alpha1.ImportedService
	if exists {
		is = obj.(*mcsv1alpha1.ImportedService)
		if is.Spec.Namespace != namespace || is.Spec.Name != name {
			is = nil
		}
	}
	if is == nil {
		return r.remove(ctx, namespace, name, labels.SelectorFromSet(labels.Set{mcs.ClusterSetLabel: r.set}))
	}
	return r.write(ctx, is)
}

// write writes ImportedService is into the cluster: the namespace where
// missing, the ServiceImport, the derived Service and the EndpointSlices,
// each only where it differs from what the cluster holds.
func (r *setReconciler) write(ctx context.Context, is *mcsv1alpha1.ImportedService) error {
	if err := r.ensureNamespace(ctx, is.Spec.Namespace); err != nil {
		return err
	}
	si, err := r.ensureServiceImport(ctx, is)
	if err != nil {
		return err
	}
	owner := ownerRef(si)
	ready, reason, message := metav1.ConditionTrue, mcsv1beta1.ServiceImportReasonReady, "The service is imported from its exporting clusters"
	if is.Spec.Type != mcsv1alpha1.Headless {
		svc, err := r.ensureDerivedService(ctx, is, owner)
		var invalid *familyError
		switch {
		case errors.As(err, &invalid):
			ready, reason, message = metav1.ConditionFalse, mcsv1beta1.ServiceImportReasonIPFamilyNotSupported, invalid.Error()
		case err != nil:
			return err
		}
		ips, families := clusterIPs(svc)
		if want := desiredServiceImport(r.set, is, ips, families); !equality.Semantic.DeepEqual(want.Spec, si.Spec) {
			si.Spec = want.Spec
			if err := r.spoke.Update(ctx, si); err != nil {
				return fmt.Errorf("set the cluster-set IP of ServiceImport %s/%s: %w", si.Namespace, si.Name, err)
			}
		}
		if reason == mcsv1beta1.ServiceImportReasonReady && len(si.Spec.IPs) == 0 {
			ready, reason, message = metav1.ConditionUnknown, mcsv1beta1.ServiceImportReasonPending, "Waiting for the cluster-set IP of derived Service "+mcs.DerivedServiceName(si.Namespace, si.Name)
		}
	}
	if err := r.ensureStatus(ctx, si, desiredStatus(is, ready, reason, message)); err != nil {
		return err
	}
	return r.ensureSlices(ctx, is, owner)
}

// ensureNamespace creates namespace where the cluster lacks it, as the
// KEP allows: namespace sameness makes it the service's namespace.
func (r *setReconciler) ensureNamespace(ctx context.Context, namespace string) error {
	err := r.spoke.Get(ctx, client.ObjectKey{Name: namespace}, &corev1.Namespace{})
	if !apierrors.IsNotFound(err) {
		return err
	}
	err = r.spoke.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s for an imported service: %w", namespace, err)
	}
	return nil
}

// ensureServiceImport creates or updates the ServiceImport of is (labels,
// annotations, spec; spec.ips as the cluster holds them) and returns it
// as the cluster holds it.
func (r *setReconciler) ensureServiceImport(ctx context.Context, is *mcsv1alpha1.ImportedService) (*mcsv1beta1.ServiceImport, error) {
	si := &mcsv1beta1.ServiceImport{}
	err := r.spoke.Get(ctx, client.ObjectKey{Namespace: is.Spec.Namespace, Name: is.Spec.Name}, si)
	if apierrors.IsNotFound(err) {
		si = desiredServiceImport(r.set, is, nil, nil)
		if err := r.spoke.Create(ctx, si); err != nil {
			return nil, fmt.Errorf("create ServiceImport %s/%s: %w", si.Namespace, si.Name, err)
		}
		return si, nil
	}
	if err != nil {
		return nil, err
	}
	if !ours(si.Labels, appManagedByLabel) {
		return nil, fmt.Errorf("ServiceImport %s/%s is not Flotilla's (no label %s=%s): leaving it alone; delete it to let the cluster import the service",
			si.Namespace, si.Name, appManagedByLabel, mcs.ManagedBy)
	}
	if !si.DeletionTimestamp.IsZero() {
		return nil, fmt.Errorf("ServiceImport %s/%s is being deleted; writing it again once it is gone", si.Namespace, si.Name)
	}
	want := desiredServiceImport(r.set, is, si.Spec.IPs, si.Spec.IPFamilies)
	if maps.Equal(want.Labels, si.Labels) && maps.Equal(want.Annotations, si.Annotations) &&
		equality.Semantic.DeepEqual(want.Spec, si.Spec) {
		return si, nil
	}
	si.Labels, si.Annotations, si.Spec = want.Labels, want.Annotations, want.Spec
	if err := r.spoke.Update(ctx, si); err != nil {
		return nil, fmt.Errorf("update ServiceImport %s/%s: %w", si.Namespace, si.Name, err)
	}
	return si, nil
}

// ensureStatus writes status onto si where it differs (the time of the
// Ready condition's last transition is kept while its status is).
func (r *setReconciler) ensureStatus(ctx context.Context, si *mcsv1beta1.ServiceImport, status mcsv1beta1.ServiceImportStatus) error {
	want := status.Conditions[0]
	want.LastTransitionTime = metav1.Now()
	for _, c := range si.Status.Conditions {
		if c.Type == want.Type && c.Status == want.Status {
			want.LastTransitionTime = c.LastTransitionTime
		}
	}
	status.Conditions = []metav1.Condition{want}
	if equality.Semantic.DeepEqual(status, si.Status) {
		return nil
	}
	si.Status = status
	if err := r.spoke.Status().Update(ctx, si); err != nil {
		return fmt.Errorf("update the status of ServiceImport %s/%s: %w", si.Namespace, si.Name, err)
	}
	return nil
}

// familyError is a derived Service the cluster refuses for its IP families.
type familyError struct{ err error }

func (e *familyError) Error() string {
	return "The cluster cannot give the service a cluster-set IP of its IP families: " + e.err.Error()
}

// ensureDerivedService creates or updates the derived Service of
// ClusterSetIP import is, owned by owner, and returns it as the cluster
// holds it.
func (r *setReconciler) ensureDerivedService(ctx context.Context, is *mcsv1alpha1.ImportedService, owner metav1.OwnerReference) (*corev1.Service, error) {
	want := desiredDerivedService(r.set, is, owner)
	svc := &corev1.Service{}
	err := r.spoke.Get(ctx, client.ObjectKeyFromObject(want), svc)
	if apierrors.IsNotFound(err) {
		if err := r.spoke.Create(ctx, want); err != nil {
			if apierrors.IsInvalid(err) && len(want.Spec.IPFamilies) > 0 {
				return nil, &familyError{err: err}
			}
			return nil, fmt.Errorf("create derived Service %s/%s: %w", want.Namespace, want.Name, err)
		}
		return want, nil
	}
	if err != nil {
		return nil, err
	}
	if !ours(svc.Labels, appManagedByLabel) {
		return nil, fmt.Errorf("Service %s/%s, the derived Service's name, is not Flotilla's: leaving it alone", svc.Namespace, svc.Name)
	}
	if equality.Semantic.DeepEqual(want.Labels, svc.Labels) && equality.Semantic.DeepEqual(want.OwnerReferences, svc.OwnerReferences) &&
		equalServicePorts(want.Spec.Ports, svc.Spec.Ports) && want.Spec.SessionAffinity == svc.Spec.SessionAffinity &&
		(want.Spec.SessionAffinityConfig == nil || equality.Semantic.DeepEqual(want.Spec.SessionAffinityConfig, svc.Spec.SessionAffinityConfig)) {
		return svc, nil
	}
	svc.Labels, svc.OwnerReferences = want.Labels, want.OwnerReferences
	svc.Spec.Ports, svc.Spec.SessionAffinity = want.Spec.Ports, want.Spec.SessionAffinity
	if want.Spec.SessionAffinityConfig != nil || want.Spec.SessionAffinity == corev1.ServiceAffinityNone {
		svc.Spec.SessionAffinityConfig = want.Spec.SessionAffinityConfig
	}
	if err := r.spoke.Update(ctx, svc); err != nil {
		return nil, fmt.Errorf("update derived Service %s/%s: %w", svc.Namespace, svc.Name, err)
	}
	return svc, nil
}

// equalServicePorts compares the ports the agent sets, not the node ports
// the API server may have allocated.
func equalServicePorts(want, got []corev1.ServicePort) bool {
	return slices.EqualFunc(want, got, func(a, b corev1.ServicePort) bool {
		return a.Name == b.Name && a.Protocol == b.Protocol && a.Port == b.Port && a.TargetPort == b.TargetPort &&
			equality.Semantic.DeepEqual(a.AppProtocol, b.AppProtocol)
	})
}

// clusterIPs returns the first two cluster IPs of derived Service svc and
// their families, none for a Service without (or nil).
func clusterIPs(svc *corev1.Service) ([]string, []corev1.IPFamily) {
	if svc == nil {
		return nil, nil
	}
	var ips []string
	for _, ip := range svc.Spec.ClusterIPs {
		if ip != "" && ip != corev1.ClusterIPNone && len(ips) < 2 {
			ips = append(ips, ip)
		}
	}
	if len(ips) == 0 {
		return nil, nil
	}
	families := svc.Spec.IPFamilies
	if len(families) > len(ips) {
		families = families[:len(ips)]
	}
	return ips, slices.Clone(families)
}

// ensureSlices makes the agent's EndpointSlices of is what it says: one
// write per slice that differs, a delete per slice no longer wanted.
func (r *setReconciler) ensureSlices(ctx context.Context, is *mcsv1alpha1.ImportedService, owner metav1.OwnerReference) error {
	existing := &discoveryv1.EndpointSliceList{}
	if err := r.spoke.List(ctx, existing, client.InNamespace(is.Spec.Namespace), client.MatchingLabels{
		mcsv1beta1.LabelServiceName: is.Spec.Name, discoveryv1.LabelManagedBy: mcs.ManagedBy,
	}); err != nil {
		return fmt.Errorf("list the imported EndpointSlices of %s/%s: %w", is.Spec.Namespace, is.Spec.Name, err)
	}
	have := map[string]*discoveryv1.EndpointSlice{}
	for i := range existing.Items {
		have[existing.Items[i].Name] = &existing.Items[i]
	}
	var errs []error
	for _, want := range desiredSlices(r.set, is, owner) {
		got, ok := have[want.Name]
		delete(have, want.Name)
		switch {
		case !ok:
			if err := r.spoke.Create(ctx, want); err != nil {
				errs = append(errs, fmt.Errorf("create EndpointSlice %s/%s: %w", want.Namespace, want.Name, err))
			}
		case !equalSlice(want, got):
			want.ResourceVersion = got.ResourceVersion
			if want.AddressType != got.AddressType {
				errs = append(errs, r.deleteObject(ctx, got))
				want.ResourceVersion = ""
				if err := r.spoke.Create(ctx, want); err != nil {
					errs = append(errs, fmt.Errorf("create EndpointSlice %s/%s: %w", want.Namespace, want.Name, err))
				}
				continue
			}
			if err := r.spoke.Update(ctx, want); err != nil {
				errs = append(errs, fmt.Errorf("update EndpointSlice %s/%s: %w", want.Namespace, want.Name, err))
			}
		}
	}
	for _, stale := range have {
		errs = append(errs, r.deleteObject(ctx, stale))
	}
	return errors.Join(errs...)
}

// equalSlice says whether slice got is what want says.
func equalSlice(want, got *discoveryv1.EndpointSlice) bool {
	return want.AddressType == got.AddressType && equality.Semantic.DeepEqual(want.Labels, got.Labels) &&
		equality.Semantic.DeepEqual(want.OwnerReferences, got.OwnerReferences) &&
		equality.Semantic.DeepEqual(want.Ports, got.Ports) && equality.Semantic.DeepEqual(want.Endpoints, got.Endpoints)
}

// remove deletes what the agent wrote for service namespace/name of the
// sets sel selects: its EndpointSlices, derived Service and ServiceImport,
// each explicitly (a cluster's garbage collector may lag).
func (r *importer) remove(ctx context.Context, namespace, name string, sel labels.Selector) error {
	var errs []error
	slicesOf := &discoveryv1.EndpointSliceList{}
	req, _ := labels.NewRequirement(mcsv1beta1.LabelServiceName, selection.Equals, []string{name})
	mine, _ := labels.NewRequirement(discoveryv1.LabelManagedBy, selection.Equals, []string{mcs.ManagedBy})
	if err := r.spoke.List(ctx, slicesOf, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: sel.Add(*req, *mine)}); err != nil {
		errs = append(errs, err)
	}
	for i := range slicesOf.Items {
		errs = append(errs, r.deleteObject(ctx, &slicesOf.Items[i]))
	}
	svc := &corev1.Service{}
	err := r.spoke.Get(ctx, client.ObjectKey{Namespace: namespace, Name: mcs.DerivedServiceName(namespace, name)}, svc)
	switch {
	case err == nil && ours(svc.Labels, appManagedByLabel) && sel.Matches(labels.Set(svc.Labels)):
		errs = append(errs, r.deleteObject(ctx, svc))
	case err != nil && !apierrors.IsNotFound(err):
		errs = append(errs, err)
	}
	si := &mcsv1beta1.ServiceImport{}
	err = r.spoke.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, si)
	switch {
	case err == nil && ours(si.Labels, appManagedByLabel) && sel.Matches(labels.Set(si.Labels)):
		errs = append(errs, r.deleteObject(ctx, si))
	case err != nil && !apierrors.IsNotFound(err) && !meta404(err):
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// deleteObject deletes obj, if it is still the object read (its UID).
func (r *importer) deleteObject(ctx context.Context, obj client.Object) error {
	err := r.spoke.Delete(ctx, obj, client.Preconditions{UID: ptrUID(obj)})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete %T %s/%s: %w", obj, obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

// localKeys returns the imported services the cluster holds anything of
// for r's set, as queue keys.
func (r *setReconciler) localKeys(ctx context.Context) ([]string, error) {
	keys, err := r.importer.localKeys(ctx, labels.SelectorFromSet(labels.Set{mcs.ClusterSetLabel: r.set}))
	if err != nil {
		return nil, err
	}
	// The hub's imports are compared too, so that a resync repairs them.
	for _, k := range r.store.ListKeys() {
		if _, key, ok := strings.Cut(k, "/"); ok {
			keys = append(keys, key)
		}
	}
	return keys, nil
}

// localKeys returns the imported services of the sets sel selects that the
// cluster holds a ServiceImport, derived Service or EndpointSlice of.
func (r *importer) localKeys(ctx context.Context, sel labels.Selector) ([]string, error) {
	var keys []string
	sis := &mcsv1beta1.ServiceImportList{}
	if err := r.spoke.List(ctx, sis, client.MatchingLabelsSelector{Selector: sel}); err != nil && !meta404(err) {
		return nil, fmt.Errorf("list the cluster's ServiceImports: %w", err)
	}
	for _, si := range sis.Items {
		if ours(si.Labels, appManagedByLabel) {
			keys = append(keys, importKey(si.Namespace, si.Name))
		}
	}
	svcs := &corev1.ServiceList{}
	if err := r.spoke.List(ctx, svcs, client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, fmt.Errorf("list the cluster's derived Services: %w", err)
	}
	for _, s := range svcs.Items {
		if ours(s.Labels, appManagedByLabel) && s.Labels[mcs.ServiceNameLabel] != "" {
			keys = append(keys, importKey(s.Namespace, s.Labels[mcs.ServiceNameLabel]))
		}
	}
	eps := &discoveryv1.EndpointSliceList{}
	if err := r.spoke.List(ctx, eps, client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, fmt.Errorf("list the cluster's imported EndpointSlices: %w", err)
	}
	for _, s := range eps.Items {
		if ours(s.Labels, discoveryv1.LabelManagedBy) && s.Labels[mcsv1beta1.LabelServiceName] != "" {
			keys = append(keys, importKey(s.Namespace, s.Labels[mcsv1beta1.LabelServiceName]))
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys), nil
}

// removeOtherSets removes everything the agent wrote for a set other than
// set (every set, when set is empty): what a cluster that left a set keeps
// of it.
func (r *importer) removeOtherSets(ctx context.Context, set string) error {
	sel := labels.NewSelector()
	has, _ := labels.NewRequirement(mcs.ClusterSetLabel, selection.Exists, nil)
	sel = sel.Add(*has)
	if set != "" {
		other, _ := labels.NewRequirement(mcs.ClusterSetLabel, selection.NotEquals, []string{set})
		sel = sel.Add(*other)
	}
	keys, err := r.localKeys(ctx, sel)
	if err != nil {
		return err
	}
	var errs []error
	for _, k := range keys {
		namespace, name, _ := splitImportKey(k)
		errs = append(errs, r.remove(ctx, namespace, name, sel))
	}
	if len(keys) > 0 && len(errs) == 0 {
		klog.FromContext(ctx).Info("Removed the imports of the cluster's former sets", "imports", len(keys))
	}
	return errors.Join(errs...)
}

// ours says whether labels mark an object as the agent's under key.
func ours(l map[string]string, key string) bool { return l[key] == mcs.ManagedBy }

// meta404 says whether err means the cluster serves no ServiceImports
// (yet): the MCS CRDs are installed at start.
func meta404(err error) bool { return meta.IsNoMatchError(err) }

// ptrUID is obj's UID, as a delete's precondition.
func ptrUID(obj client.Object) *types.UID {
	uid := obj.GetUID()
	return &uid
}
