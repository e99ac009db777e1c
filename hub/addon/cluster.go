package addon

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/internal/addon"
)

// ClusterReconciler keeps, per ManagedCluster, what its add-ons show on
// it and what its health means for them: the feature label of each
// add-on, and, while the cluster is unknown, its Available=Unknown on
// every add-on. It acts on every add-on, whoever manages it.
type ClusterReconciler struct {
	Client client.Client
}

func setupClusters(mgr manager.Manager) error {
	r := &ClusterReconciler{Client: mgr.GetClient()}
	return ctrl.NewControllerManagedBy(mgr).
		Named("addon-cluster").
		For(&clusterv1.ManagedCluster{}).
		Watches(&addonv1alpha1.ManagedClusterAddOn{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: o.GetNamespace()}}}
		})).
		Complete(r)
}

// featurePrefix starts the ManagedCluster labels of add-ons.
var featurePrefix = addon.FeatureLabel("")

// Reconcile copies an unknown cluster's Available into its add-ons and
// sets the cluster's feature labels from the add-ons' Available.
func (r *ClusterReconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	mc := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, mc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	list := &addonv1alpha1.ManagedClusterAddOnList{}
	if err := r.Client.List(ctx, list, client.InNamespace(mc.Name)); err != nil {
		return ctrl.Result{}, fmt.Errorf("list the ManagedClusterAddOns of cluster %s: %w", mc.Name, err)
	}
	unknown := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
	if unknown != nil && unknown.Status != metav1.ConditionUnknown {
		unknown = nil
	}
	var errs []error
	labels := map[string]string{}
	for i := range list.Items {
		mca := &list.Items[i]
		if !mca.DeletionTimestamp.IsZero() {
			continue
		}
		if unknown != nil {
			if err := r.copyUnknown(ctx, mca, unknown); err != nil {
				errs = append(errs, err)
			}
		}
		labels[addon.FeatureLabel(mca.Name)] = featureValue(mca)
	}
	if err := r.writeLabels(ctx, mc, labels); err != nil {
		errs = append(errs, err)
	}
	return ctrl.Result{}, errors.Join(errs...)
}

// copyUnknown sets mca's Available to the cluster's unknown condition.
func (r *ClusterReconciler) copyUnknown(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn, cluster *metav1.Condition) error {
	cur := meta.FindStatusCondition(mca.Status.Conditions, addon.ConditionAvailable)
	if cur != nil && cur.Status == cluster.Status && cur.Reason == cluster.Reason && cur.Message == cluster.Message {
		return nil
	}
	base := mca.DeepCopy()
	meta.SetStatusCondition(&mca.Status.Conditions, metav1.Condition{Type: addon.ConditionAvailable, Status: cluster.Status,
		Reason: cluster.Reason, Message: cluster.Message, ObservedGeneration: mca.Generation})
	if err := r.Client.Status().Patch(ctx, mca, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("copy the unknown state of cluster %s into ManagedClusterAddOn %s: %w", mca.Namespace, mca.Name, err)
	}
	return nil
}

// featureValue is an add-on's feature label value from its Available.
func featureValue(mca *addonv1alpha1.ManagedClusterAddOn) string {
	switch c := meta.FindStatusCondition(mca.Status.Conditions, addon.ConditionAvailable); {
	case c == nil || c.Status == metav1.ConditionUnknown:
		return addon.FeatureUnreachable
	case c.Status == metav1.ConditionTrue:
		return addon.FeatureAvailable
	default:
		return addon.FeatureUnhealthy
	}
}

// writeLabels makes the cluster's feature labels of add-ons exactly want.
func (r *ClusterReconciler) writeLabels(ctx context.Context, mc *clusterv1.ManagedCluster, want map[string]string) error {
	next := map[string]string{}
	for k, v := range mc.Labels {
		if !strings.HasPrefix(k, featurePrefix) {
			next[k] = v
		}
	}
	maps.Copy(next, want)
	if maps.Equal(next, mc.Labels) {
		return nil
	}
	base := mc.DeepCopy()
	mc.Labels = next
	if err := r.Client.Patch(ctx, mc, client.MergeFrom(base)); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("write the add-on feature labels of ManagedCluster %s: %w", mc.Name, err)
	}
	return nil
}
