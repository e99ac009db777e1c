package addon

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/addon"
)

// reconcile brings add-on name of the cluster in line: driver, Secrets,
// health. It returns when to look again (0: on the next event).
func (r *runner) reconcile(ctx context.Context, name string) (time.Duration, error) {
	logger := klog.FromContext(ctx).WithValues("addon", name)
	ctx = klog.NewContext(ctx, logger)
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	err := r.hub.Get(ctx, client.ObjectKey{Namespace: r.cfg.ClusterName, Name: name}, mca)
	if apierrors.IsNotFound(err) {
		r.forget(name)
		return 0, r.removeLeftovers(ctx, name, nil)
	}
	if err != nil {
		return 0, err
	}
	if !mca.DeletionTimestamp.IsZero() {
		return 0, nil
	}
	if hasKubeClient(mca) && mca.Status.KubeClientDriver != addon.KubeClientDriverCSR {
		// The driver goes first, alone: the hub fills in the subject of a
		// csr registration once it knows the driver.
		before := mca.DeepCopy()
		mca.Status.KubeClientDriver = addon.KubeClientDriverCSR
		return 0, r.patchStatus(ctx, before, mca)
	}

	regs := registrations(r.cfg.ClusterName, mca)
	if err := r.removeLeftovers(ctx, name, regs); err != nil {
		return 0, err
	}
	before := mca.DeepCopy()
	after := secretCheckInterval
	var errs []error
	for i := range regs {
		if why := r.installable(regs[i].secret.Namespace); why != "" {
			meta.SetStatusCondition(&mca.Status.Conditions, metav1.Condition{
				Type: addon.ConditionClusterCertificateRotated, Status: metav1.ConditionFalse,
				Reason: addon.ReasonClientCertificateUpdateFailed, Message: why, ObservedGeneration: mca.Generation,
			})
			continue
		}
		d, cond, err := r.register(ctx, &regs[i])
		if cond != nil {
			cond.ObservedGeneration = mca.Generation
			meta.SetStatusCondition(&mca.Status.Conditions, *cond)
		}
		errs = append(errs, err)
		if d > 0 && d < after {
			after = d
		}
	}
	if mode := mca.Status.HealthCheck.Mode; (mode == "" || mode == addon.HealthCheckModeLease) && r.installable(installNamespace(mca)) == "" {
		cond, err := r.leaseCondition(ctx, name, installNamespace(mca))
		if err != nil {
			errs = append(errs, err)
		} else {
			cond.ObservedGeneration = mca.Generation
			meta.SetStatusCondition(&mca.Status.Conditions, cond)
		}
		after = min(after, r.cfg.LeaseCheckInterval)
	}
	if err := r.patchStatus(ctx, before, mca); err != nil {
		errs = append(errs, err)
	}
	return after, errors.Join(errs...)
}

// patchStatus writes what changed of mca's status since before, guarded
// by the resourceVersion read (the hub writes conditions too).
func (r *runner) patchStatus(ctx context.Context, before, mca *addonv1alpha1.ManagedClusterAddOn) error {
	if equality.Semantic.DeepEqual(before.Status, mca.Status) {
		return nil
	}
	if err := r.hub.Status().Patch(ctx, mca, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("write the status of ManagedClusterAddOn %s/%s: %w", mca.Namespace, mca.Name, err)
	}
	return nil
}

// leaseCondition is Available as the add-on's Lease in namespace ns says.
func (r *runner) leaseCondition(ctx context.Context, a, ns string) (metav1.Condition, error) {
	cond := metav1.Condition{Type: addon.ConditionAvailable}
	lease, err := r.spoke.CoordinationV1().Leases(ns).Get(ctx, a, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		cond.Status, cond.Reason, cond.Message = metav1.ConditionUnknown, addon.ReasonLeaseNotFound, addon.LeaseUnknownMessage(a)
		return cond, nil
	case err != nil:
		return cond, fmt.Errorf("read Lease %s/%s: %w", ns, a, err)
	}
	if lease.Spec.RenewTime != nil && time.Since(lease.Spec.RenewTime.Time) <= r.cfg.LeaseGracePeriod {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, addon.ReasonLeaseUpdated, addon.LeaseAvailableMessage(a)
	} else {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, addon.ReasonLeaseUpdateStopped, addon.LeaseUnavailableMessage(a)
	}
	return cond, nil
}
