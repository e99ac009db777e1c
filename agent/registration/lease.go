package registration

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
)

// maxRejections is how many times in a row the hub may reject the client
// certificate before the agent gives it up and joins again.
const maxRejections = 3

// leasePeriod is the ManagedCluster's spec.leaseDurationSeconds as last read.
func (r *Registration) leasePeriod() time.Duration {
	if s := r.leaseSeconds.Load(); s > 0 {
		return time.Duration(s) * time.Second
	}
	return clusterv1.DefaultLeaseDurationSeconds * time.Second
}

// renewLease renews the cluster's lease every lease period, and retries
// sooner after a failure. Each time it also checks that the credentials are
// still usable, and returns why when they are not.
func (r *Registration) renewLease(ctx context.Context, s *session) error {
	logger := klog.FromContext(ctx)
	backoff := newBackoff(time.Minute)
	rejections := 0
	var last *coordinationv1.Lease
	for {
		next := r.leasePeriod()
		var err error
		last, err = r.renewLeaseOnce(ctx, s, last)
		switch {
		case err == nil:
			backoff = newBackoff(time.Minute)
			rejections = 0
		case ctx.Err() != nil:
			return ctx.Err()
		default:
			err = s.hubErr(err)
			if rejected(err) {
				if rejections++; rejections >= maxRejections {
					return fmt.Errorf("%d attempts in a row failed: %w", rejections, err)
				}
			}
			next = min(backoff.Step(), next)
			logger.Info("Cannot renew the cluster lease; retrying", "reason", err.Error(), "retryIn", next.Round(time.Millisecond))
		}
		if err := r.checkCredentials(ctx, s); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(next):
		}
	}
}

// renewLeaseOnce sets the lease's renew time to now and returns the lease
// as written, or nil on failure. Given the lease it wrote last time, it
// writes only (one request, as the kubelet renews its node lease, rather
// than a read from etcd and a write); it reads the lease again when there
// is none, or when the write finds it changed or gone, and creates it when
// the hub has not.
func (r *Registration) renewLeaseOnce(ctx context.Context, s *session, last *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	leases := s.kube.CoordinationV1().Leases(r.cfg.ClusterName)
	now := metav1.NowMicro()
	if last != nil {
		lease := last.DeepCopy()
		lease.Spec.RenewTime = &now
		updated, err := leases.Update(ctx, lease, metav1.UpdateOptions{})
		switch {
		case err == nil:
			return updated, nil
		case !apierrors.IsConflict(err) && !apierrors.IsNotFound(err):
			return nil, err
		}
	}
	lease, err := leases.Get(ctx, clusterv1.ManagedClusterLeaseName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		lease, err = leases.Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: clusterv1.ManagedClusterLeaseName, Namespace: r.cfg.ClusterName},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity:       ptr.To(r.cfg.ClusterName),
				LeaseDurationSeconds: ptr.To(int32(r.leasePeriod() / time.Second)),
				RenewTime:            &now,
			},
		}, metav1.CreateOptions{})
	} else if err == nil {
		lease.Spec.RenewTime = &now
		lease, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
	}
	if err != nil {
		return nil, err
	}
	return lease, nil
}

// checkCredentials says why the session's credentials are no longer
// usable: expired, or the bootstrap kubeconfig now names another hub or CA.
func (r *Registration) checkCredentials(ctx context.Context, s *session) error {
	creds := s.creds.Load()
	// Without a readable bootstrap kubeconfig, only expiry counts.
	hub := creds.Hub
	if b, err := r.loadBootstrap(ctx); err == nil {
		hub = b.hub
	}
	return creds.usable(time.Now(), creds.ClusterName, creds.AgentID, hub)
}
