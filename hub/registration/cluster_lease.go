package registration

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
)

// reconcileLease marks a cluster Available=Unknown once its agent has not
// renewed managed-cluster-lease for 5 × spec.leaseDurationSeconds (the
// longer of the old and the new period while the agent has not renewed at
// a new one yet, see followLease), and otherwise asks to run again when
// that deadline passes. Clusters that were never accepted have no lease to
// watch.
func (r *ClusterReconciler) reconcileLease(ctx context.Context, s *clusterScope) (ctrl.Result, error) {
	cluster := s.cluster
	if meta.FindStatusCondition(cluster.Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted) == nil {
		return ctrl.Result{}, nil
	}
	key := client.ObjectKey{Namespace: cluster.Name, Name: clusterv1.ManagedClusterLeaseName}
	lease := &coordinationv1.Lease{}
	err := r.Client.Get(ctx, key, lease)
	switch {
	case apierrors.IsNotFound(err):
		return r.createLease(ctx, s)
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("get lease %s: %w", key, err)
	}

	f := followLease(lease, cluster.Spec.LeaseDurationSeconds, s.now.Time)
	expired, left := leaseCheck(renewTime(lease), f.graceSeconds, s.now.Time)
	if expired {
		// The cache may not have seen the latest renewal yet: ask the API
		// server before declaring the agent gone.
		if err := r.APIReader.Get(ctx, key, lease); err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("get lease %s: %w", key, err)
		}
		now := time.Now()
		f = followLease(lease, cluster.Spec.LeaseDurationSeconds, now)
		expired, left = leaseCheck(renewTime(lease), f.graceSeconds, now)
	}
	if err := r.recordLeaseChange(ctx, lease, f); err != nil {
		return ctrl.Result{}, err
	}
	if !expired {
		if f.recheck > 0 && f.recheck < left {
			left = f.recheck
		}
		return ctrl.Result{RequeueAfter: left}, nil
	}
	if meta.IsStatusConditionPresentAndEqual(cluster.Status.Conditions, clusterv1.ManagedClusterConditionAvailable, metav1.ConditionUnknown) {
		return ctrl.Result{}, nil
	}
	cond := leaseStoppedCondition(f.graceSeconds, cluster.Generation)
	meta.SetStatusCondition(&cluster.Status.Conditions, cond)
	s.events.Add(corev1.EventTypeWarning, reasonAvailableUnknown, "CheckLease", "%s", cond.Message)
	// A renewal does not make the cluster Available again: its agent does.
	return ctrl.Result{}, nil
}

// createLease starts the lease of a newly accepted cluster, as OCM's hub
// does: OCM agents only update it. The grace period runs from now.
func (r *ClusterReconciler) createLease(ctx context.Context, s *clusterScope) (ctrl.Result, error) {
	cluster := s.cluster
	if !s.namespaceReady {
		return ctrl.Result{}, nil
	}
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: clusterv1.ManagedClusterLeaseName, Namespace: cluster.Name, Labels: clusterLabels(cluster.Name)},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(clusterv1.ManagedClusterLeaseName),
			LeaseDurationSeconds: ptr.To(leasePeriod(cluster.Spec.LeaseDurationSeconds)),
			RenewTime:            &metav1.MicroTime{Time: s.now.Time},
		},
	}
	if err := r.Client.Create(ctx, lease); err != nil && !apierrors.IsAlreadyExists(err) {
		return ctrl.Result{}, fmt.Errorf("create lease %s/%s: %w", lease.Namespace, lease.Name, err)
	}
	return ctrl.Result{RequeueAfter: leaseGracePeriod(cluster.Spec.LeaseDurationSeconds)}, nil
}

// renewTime is when a lease was last renewed (or taken, or created).
func renewTime(lease *coordinationv1.Lease) time.Time {
	switch {
	case lease.Spec.RenewTime != nil:
		return lease.Spec.RenewTime.Time
	case lease.Spec.AcquireTime != nil:
		return lease.Spec.AcquireTime.Time
	default:
		return lease.CreationTimestamp.Time
	}
}
