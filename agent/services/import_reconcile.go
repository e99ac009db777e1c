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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
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

// write writes ImportedService is into the cluster: the ServiceImport
// (and the namespace where missing), the derived Service and the
// EndpointSlices, each only where it differs from what the agent last
// wrote or saw there.
func (r *setReconciler) write(ctx context.Context, is *mcsv1alpha1.ImportedService) error {
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
			if err := r.update(ctx, r.own.serviceImports, si, false); err != nil {
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

// create creates obj and records it as the agent's write of kind k.
func (r *importer) create(ctx context.Context, k *ownKind, obj client.Object) error {
	if err := r.spoke.Create(ctx, obj); err != nil {
		return err
	}
	k.wrote(obj)
	return nil
}

// update updates obj (at the resourceVersion the agent last wrote or saw)
// and records it; a conflict forgets the agent's copy, so that the retry
// reads the informer's.
func (r *importer) update(ctx context.Context, k *ownKind, obj client.Object, status bool) error {
	var err error
	if status {
		err = r.spoke.Status().Update(ctx, obj)
	} else {
		err = r.spoke.Update(ctx, obj)
	}
	if err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			k.forget(obj)
		}
		return err
	}
	k.wrote(obj)
	return nil
}

// ensureServiceImport creates or updates the ServiceImport of is (labels,
// annotations, spec; spec.ips as the cluster holds them) and returns it
// as the cluster holds it. The namespace is created where missing, as the
// KEP allows: namespace sameness makes it the service's namespace.
func (r *setReconciler) ensureServiceImport(ctx context.Context, is *mcsv1alpha1.ImportedService) (*mcsv1beta1.ServiceImport, error) {
	obj := r.own.serviceImports.get(is.Spec.Namespace, is.Spec.Name)
	if obj == nil {
		si := desiredServiceImport(r.set, is, nil, nil)
		err := r.create(ctx, r.own.serviceImports, si)
		if apierrors.IsNotFound(err) {
			err = r.spoke.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: si.Namespace}})
			if err != nil && !apierrors.IsAlreadyExists(err) {
				return nil, fmt.Errorf("create namespace %s for an imported service: %w", si.Namespace, err)
			}
			err = r.create(ctx, r.own.serviceImports, si)
		}
		if apierrors.IsAlreadyExists(err) {
			// The informer holds every ServiceImport labelled as the agent's.
			return nil, fmt.Errorf("ServiceImport %s/%s is not Flotilla's (no label %s=%s): leaving it alone; delete it to let the cluster import the service",
				si.Namespace, si.Name, appManagedByLabel, mcs.ManagedBy)
		}
		if err != nil {
			return nil, fmt.Errorf("create ServiceImport %s/%s: %w", si.Namespace, si.Name, err)
		}
		return si, nil
	}
	si := obj.(*mcsv1beta1.ServiceImport)
	if !si.DeletionTimestamp.IsZero() {
		return nil, fmt.Errorf("ServiceImport %s/%s is being deleted; writing it again once it is gone", si.Namespace, si.Name)
	}
	want := desiredServiceImport(r.set, is, si.Spec.IPs, si.Spec.IPFamilies)
	if maps.Equal(want.Labels, si.Labels) && maps.Equal(want.Annotations, si.Annotations) &&
		equality.Semantic.DeepEqual(want.Spec, si.Spec) {
		return si, nil
	}
	si.Labels, si.Annotations, si.Spec = want.Labels, want.Annotations, want.Spec
	if err := r.update(ctx, r.own.serviceImports, si, false); err != nil {
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
	if err := r.update(ctx, r.own.serviceImports, si, true); err != nil {
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
// holds it. A Service whose IP families must change is made again: the
// API server lets no update change the primary family.
func (r *setReconciler) ensureDerivedService(ctx context.Context, is *mcsv1alpha1.ImportedService, owner metav1.OwnerReference) (*corev1.Service, error) {
	want := desiredDerivedService(r.set, is, owner)
	obj := r.own.services.get(want.Namespace, want.Name)
	if obj != nil && familiesChange(want, obj.(*corev1.Service)) {
		klog.FromContext(ctx).Info("Making the derived Service again for the import's IP families", "service", klog.KObj(want),
			"from", obj.(*corev1.Service).Spec.IPFamilies, "to", want.Spec.IPFamilies)
		if err := r.deleteObject(ctx, r.own.services, obj); err != nil {
			return nil, err
		}
		obj = nil
	}
	if obj == nil {
		if err := r.create(ctx, r.own.services, want); err != nil {
			switch {
			case apierrors.IsInvalid(err) && len(want.Spec.IPFamilies) > 0:
				return nil, &familyError{err: err}
			case apierrors.IsAlreadyExists(err):
				return nil, fmt.Errorf("Service %s/%s, the derived Service's name, is not Flotilla's: leaving it alone", want.Namespace, want.Name)
			}
			return nil, fmt.Errorf("create derived Service %s/%s: %w", want.Namespace, want.Name, err)
		}
		return want, nil
	}
	svc := obj.(*corev1.Service)
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
	if err := r.update(ctx, r.own.services, svc, false); err != nil {
		return nil, fmt.Errorf("update derived Service %s/%s: %w", svc.Namespace, svc.Name, err)
	}
	return svc, nil
}

// familiesChange says whether derived Service got must be made again to
// be what want asks of its IP families: another primary family, or
// another policy (single or dual stack). A dual-stack policy in a
// single-stack cluster gets one family, which is what it asked for.
func familiesChange(want, got *corev1.Service) bool {
	if len(want.Spec.IPFamilies) == 0 {
		return false
	}
	if len(got.Spec.IPFamilies) == 0 || got.Spec.IPFamilies[0] != want.Spec.IPFamilies[0] {
		return true
	}
	return want.Spec.IPFamilyPolicy != nil && ptr.Deref(got.Spec.IPFamilyPolicy, corev1.IPFamilyPolicySingleStack) != *want.Spec.IPFamilyPolicy
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
	have := map[string]*discoveryv1.EndpointSlice{}
	for _, o := range r.own.slices.list(bySliceService, importKey(is.Spec.Namespace, is.Spec.Name), nil) {
		have[o.GetName()] = o.(*discoveryv1.EndpointSlice)
	}
	var errs []error
	for _, want := range desiredSlices(r.set, is, owner) {
		got, ok := have[want.Name]
		delete(have, want.Name)
		switch {
		case !ok:
			if err := r.create(ctx, r.own.slices, want); err != nil {
				errs = append(errs, fmt.Errorf("create EndpointSlice %s/%s: %w", want.Namespace, want.Name, err))
			}
		case !equalSlice(want, got):
			want.ResourceVersion = got.ResourceVersion
			if want.AddressType != got.AddressType {
				errs = append(errs, r.deleteObject(ctx, r.own.slices, got))
				want.ResourceVersion = ""
				if err := r.create(ctx, r.own.slices, want); err != nil {
					errs = append(errs, fmt.Errorf("create EndpointSlice %s/%s: %w", want.Namespace, want.Name, err))
				}
				continue
			}
			want.UID = got.UID
			if err := r.update(ctx, r.own.slices, want, false); err != nil {
				errs = append(errs, fmt.Errorf("update EndpointSlice %s/%s: %w", want.Namespace, want.Name, err))
			}
		}
	}
	for _, stale := range have {
		errs = append(errs, r.deleteObject(ctx, r.own.slices, stale))
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
	mine := func(o client.Object) bool { return sel.Matches(labels.Set(o.GetLabels())) }
	for _, s := range r.own.slices.list(bySliceService, importKey(namespace, name), mine) {
		errs = append(errs, r.deleteObject(ctx, r.own.slices, s))
	}
	if svc := r.own.services.get(namespace, mcs.DerivedServiceName(namespace, name)); svc != nil && mine(svc) {
		errs = append(errs, r.deleteObject(ctx, r.own.services, svc))
	}
	if si := r.own.serviceImports.get(namespace, name); si != nil && mine(si) {
		errs = append(errs, r.deleteObject(ctx, r.own.serviceImports, si))
	}
	return errors.Join(errs...)
}

// deleteObject deletes obj of kind k, if it is still the object read (its
// UID), and records the delete.
func (r *importer) deleteObject(ctx context.Context, k *ownKind, obj client.Object) error {
	err := r.spoke.Delete(ctx, obj, client.Preconditions{UID: ptrUID(obj)})
	switch {
	case err == nil || apierrors.IsNotFound(err):
		k.deleted(obj)
	case apierrors.IsConflict(err):
		k.forget(obj)
	default:
		return fmt.Errorf("delete %T %s/%s: %w", obj, obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

// localKeys returns the imported services the cluster holds anything of
// for r's set, and those of the hub, as queue keys.
func (r *setReconciler) localKeys() []string {
	keys := r.importer.localKeys(labels.SelectorFromSet(labels.Set{mcs.ClusterSetLabel: r.set}))
	// The hub's imports are compared too, so that a resync repairs them.
	for _, k := range r.store.ListKeys() {
		if _, key, ok := strings.Cut(k, "/"); ok {
			keys = append(keys, key)
		}
	}
	return keys
}

// localKeys returns the imported services of the sets sel selects that the
// cluster holds a ServiceImport, derived Service or EndpointSlice of.
func (r *importer) localKeys(sel labels.Selector) []string {
	var keys []string
	for _, k := range r.own.kinds() {
		for _, o := range k.list("", "", func(o client.Object) bool { return sel.Matches(labels.Set(o.GetLabels())) }) {
			if key := k.key(o); key != "" {
				keys = append(keys, key)
			}
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
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
	keys := r.localKeys(sel)
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

// ptrUID is obj's UID, as a delete's precondition.
func ptrUID(obj client.Object) *types.UID {
	uid := obj.GetUID()
	return &uid
}
