package inventory

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/api/multicluster/v1alpha1"
	"github.com/flotilla-io/flotilla/hub/clusterset"
)

// ProfileReconciler keeps the ClusterProfiles of one inventory namespace
// (the request's name) in line with the clusters of the sets bound there.
type ProfileReconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// ClusterInfo holds kube-public/cluster-info.
	ClusterInfo client.Reader
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Reconcile creates, updates and deletes the profiles of one namespace.
func (r *ProfileReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ns := req.Name
	clusters, err := r.inventory(ctx, ns)
	if err != nil {
		return ctrl.Result{}, err
	}
	hub, err := readHubAccess(ctx, r.ClusterInfo)
	if err != nil {
		return ctrl.Result{}, err
	}
	if hub == nil && len(clusters) > 0 {
		klog.FromContext(ctx).Info("The hub publishes no address in kube-public/cluster-info yet: ClusterProfiles get their access provider once it does", "namespace", ns)
	}
	existing := &multiclusterv1alpha1.ClusterProfileList{}
	if err := r.Client.List(ctx, existing, client.InNamespace(ns), client.MatchingLabels{multiclusterv1alpha1.ClusterManagerLabel: ClusterManagerName}); err != nil {
		return ctrl.Result{}, fmt.Errorf("list the ClusterProfiles of %s: %w", ns, err)
	}
	have := map[string]*multiclusterv1alpha1.ClusterProfile{}
	for i := range existing.Items {
		have[existing.Items[i].Name] = &existing.Items[i]
	}
	var result ctrl.Result
	for _, name := range slices.Sorted(maps.Keys(clusters)) {
		after, err := r.writeProfile(ctx, ns, clusters[name], have[name], hub)
		if err != nil {
			return ctrl.Result{}, err
		}
		if after > 0 && (result.RequeueAfter == 0 || after < result.RequeueAfter) {
			result.RequeueAfter = after
		}
		delete(have, name)
	}
	for _, name := range slices.Sorted(maps.Keys(have)) {
		p := have[name]
		if p.Spec.ClusterManager.Name != ClusterManagerName {
			continue
		}
		if err := r.Client.Delete(ctx, p, client.Preconditions{UID: &p.UID}); client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
			return ctrl.Result{}, fmt.Errorf("delete ClusterProfile %s/%s: %w", ns, name, err)
		}
		klog.FromContext(ctx).V(1).Info("Deleted a ClusterProfile whose cluster is no longer in a set bound here", "clusterProfile", klog.KObj(p))
	}
	return result, nil
}

// inventory returns the clusters of namespace ns: the members, not being
// deleted, of the sets bound to ns by a binding named after an existing
// set (as for Placements).
func (r *ProfileReconciler) inventory(ctx context.Context, ns string) (map[string]*clusterv1.ManagedCluster, error) {
	bindings := &clusterv1beta2.ManagedClusterSetBindingList{}
	if err := r.Client.List(ctx, bindings, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("list the ManagedClusterSetBindings of %s: %w", ns, err)
	}
	var selectors []labels.Selector
	for _, b := range bindings.Items {
		if b.Name != b.Spec.ClusterSet || !b.DeletionTimestamp.IsZero() {
			continue
		}
		set := &clusterv1beta2.ManagedClusterSet{}
		if err := r.Client.Get(ctx, client.ObjectKey{Name: b.Spec.ClusterSet}, set); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("get ManagedClusterSet %s: %w", b.Spec.ClusterSet, err)
		}
		if !set.DeletionTimestamp.IsZero() {
			continue
		}
		sel, err := clusterset.Selector(set)
		if err != nil {
			// The set's own status says what is wrong with it.
			continue
		}
		selectors = append(selectors, sel)
	}
	out := map[string]*clusterv1.ManagedCluster{}
	if len(selectors) == 0 {
		return out, nil
	}
	clusters := &clusterv1.ManagedClusterList{}
	if err := r.Client.List(ctx, clusters); err != nil {
		return nil, fmt.Errorf("list ManagedClusters: %w", err)
	}
	for i := range clusters.Items {
		c := &clusters.Items[i]
		if !c.DeletionTimestamp.IsZero() {
			continue
		}
		for _, sel := range selectors {
			if sel.Matches(labels.Set(c.Labels)) {
				out[c.Name] = c
				break
			}
		}
	}
	return out, nil
}

// writeProfile creates or updates the profile of mc in ns; cur is nil when
// it does not exist. It returns when its properties are next due to be
// observed again (0: never).
func (r *ProfileReconciler) writeProfile(ctx context.Context, ns string, mc *clusterv1.ManagedCluster, cur *multiclusterv1alpha1.ClusterProfile, hub *HubAccess) (time.Duration, error) {
	if cur == nil {
		cur = &multiclusterv1alpha1.ClusterProfile{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: mc.Name, Labels: profileLabels(mc.Name)},
			Spec: multiclusterv1alpha1.ClusterProfileSpec{
				DisplayName:    mc.Name,
				ClusterManager: multiclusterv1alpha1.ClusterManager{Name: ClusterManagerName},
			},
		}
		if err := r.Client.Create(ctx, cur); err != nil {
			if apierrors.IsAlreadyExists(err) {
				// Either ours, not in the cache yet (its event brings
				// this namespace back), or another manager's, which
				// stays as it is.
				klog.FromContext(ctx).V(1).Info("A ClusterProfile of that name exists already", "clusterProfile", klog.KRef(ns, mc.Name))
				return 0, nil
			}
			return 0, fmt.Errorf("create ClusterProfile %s/%s: %w", ns, mc.Name, err)
		}
		klog.FromContext(ctx).V(1).Info("Created a ClusterProfile", "clusterProfile", klog.KObj(cur))
	}
	if cur.Spec.ClusterManager.Name != ClusterManagerName {
		// Another manager's profile of the same name: not ours to touch.
		return 0, nil
	}
	before := cur.DeepCopy()
	maps.Copy(cur.Labels, profileLabels(mc.Name))
	if cur.Spec.DisplayName == "" {
		cur.Spec.DisplayName = mc.Name
	}
	if !equality.Semantic.DeepEqual(before.ObjectMeta, cur.ObjectMeta) || !equality.Semantic.DeepEqual(before.Spec, cur.Spec) {
		if err := r.Client.Patch(ctx, cur, client.MergeFrom(before)); err != nil {
			return 0, fmt.Errorf("patch ClusterProfile %s/%s: %w", ns, mc.Name, err)
		}
		before = cur.DeepCopy()
	}
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	renewed, err := r.leaseRenewed(ctx, mc.Name)
	if err != nil {
		return 0, err
	}
	at := now().Truncate(time.Second)
	want, err := desiredStatus(mc, cur.Status, cur.Generation, hub, at, renewed)
	if err != nil {
		return 0, err
	}
	if equality.Semantic.DeepEqual(cur.Status, want) {
		return refreshAfter(want, at), nil
	}
	cur.Status = want
	if err := r.Client.Status().Patch(ctx, cur, client.MergeFrom(before)); err != nil {
		return 0, fmt.Errorf("patch status of ClusterProfile %s/%s: %w", ns, mc.Name, err)
	}
	return refreshAfter(want, at), nil
}

// leaseRenewed is when cluster's agent last renewed its lease, from the
// cache; zero when there is no lease (yet). The lease is read, not
// watched: its renewals, every lease period, would reconcile every
// inventory for nothing; the reconcile asks to run again when the
// properties are due instead (refreshAfter).
func (r *ProfileReconciler) leaseRenewed(ctx context.Context, cluster string) (time.Time, error) {
	lease := &coordinationv1.Lease{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: cluster, Name: clusterv1.ManagedClusterLeaseName}, lease)
	switch {
	case apierrors.IsNotFound(err):
		return time.Time{}, nil
	case err != nil:
		return time.Time{}, fmt.Errorf("get the lease of cluster %s: %w", cluster, err)
	case lease.Spec.RenewTime == nil:
		return time.Time{}, nil
	}
	return lease.Spec.RenewTime.Time, nil
}

// allNamespaces maps any change to every inventory namespace: those with a
// binding, and those with a profile of ours.
func (r *ProfileReconciler) allNamespaces(ctx context.Context, _ client.Object) []ctrl.Request {
	seen := map[string]bool{}
	bindings := &clusterv1beta2.ManagedClusterSetBindingList{}
	if err := r.Client.List(ctx, bindings, client.UnsafeDisableDeepCopy); err != nil {
		klog.FromContext(ctx).Error(err, "Cannot list ManagedClusterSetBindings")
	}
	for _, b := range bindings.Items {
		seen[b.Namespace] = true
	}
	profiles := &multiclusterv1alpha1.ClusterProfileList{}
	if err := r.Client.List(ctx, profiles, client.MatchingLabels{multiclusterv1alpha1.ClusterManagerLabel: ClusterManagerName}, client.UnsafeDisableDeepCopy); err != nil {
		klog.FromContext(ctx).Error(err, "Cannot list ClusterProfiles")
	}
	for _, p := range profiles.Items {
		seen[p.Namespace] = true
	}
	reqs := make([]ctrl.Request, 0, len(seen))
	for _, ns := range slices.Sorted(maps.Keys(seen)) {
		reqs = append(reqs, namespaceRequest(ns))
	}
	return reqs
}

// namespacesOfSet maps a set to the namespaces of its bindings.
func (r *ProfileReconciler) namespacesOfSet(ctx context.Context, set client.Object) []ctrl.Request {
	bindings := &clusterv1beta2.ManagedClusterSetBindingList{}
	if err := r.Client.List(ctx, bindings, client.MatchingFields{bindingSetIndex: set.GetName()}, client.UnsafeDisableDeepCopy); err != nil {
		klog.FromContext(ctx).Error(err, "Cannot list the bindings of a ManagedClusterSet", "managedClusterSet", klog.KObj(set))
		return nil
	}
	reqs := make([]ctrl.Request, 0, len(bindings.Items))
	for _, b := range bindings.Items {
		reqs = append(reqs, namespaceRequest(b.Namespace))
	}
	return reqs
}
