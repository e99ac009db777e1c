package clustermanager

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1 "github.com/flotilla-io/flotilla/api/operator/v1"
)

// The names of OCM's hub components, as clusteradm get hub-info looks them
// up in status.relatedResources.
const (
	RegistrationController = "cluster-manager-registration-controller"
	RegistrationWebhook    = "cluster-manager-registration-webhook"
	WorkController         = "cluster-manager-work-controller"
	WorkWebhook            = "cluster-manager-work-webhook"
	PlacementController    = "cluster-manager-placement-controller"
	AddOnManager           = "cluster-manager-addon-manager-controller"
)

// Lease timing: a component's Lease is renewed every renewInterval and
// says it holds for leaseDuration, so one missed renewal does not expire it.
const (
	renewInterval = 30 * time.Second
	leaseDuration = 90 * time.Second
)

// RunsAnnotation on a component's Lease says what does that component's
// work in Flotilla.
const RunsAnnotation = "flotilla.io/runs"

// component is an OCM hub component and what does its work here.
type component struct {
	name string
	runs string
}

// components are the OCM components this hub does the work of; the work
// webhook only when this process serves the ManifestWork webhook.
func (r *Reconciler) components() []component {
	cs := []component{
		{RegistrationController, "the registration controllers of the flotilla-hub process (hub/registration)"},
		{RegistrationWebhook, "the admission policies the flotilla-hub process installs, enforced by the API server (hub/registration)"},
		{WorkController, "the ManifestWorkReplicaSet controller of the flotilla-hub process (hub/workreplicaset)"},
		{PlacementController, "the placement controllers of the flotilla-hub process (hub/placement)"},
		{AddOnManager, "the add-on manager of the flotilla-hub process (hub/addon, hub/addon/template, hub/addon/registration)"},
	}
	if r.WorkWebhook {
		cs = append(cs, component{WorkWebhook, "the ManifestWork admission webhook the flotilla-hub process serves"})
	}
	return cs
}

// componentNames are the names clusteradm reads, whether or not this hub
// runs them: a name it cannot find fails the whole command.
var componentNames = []string{RegistrationController, RegistrationWebhook, WorkController, WorkWebhook, PlacementController, AddOnManager}

// componentResources are the related resources of the components: the
// Leases the hub keeps in its namespace. None is a Deployment: the hub
// runs them in one process, and clusteradm, which looks each name up as a
// Deployment, finds none and shows the component without a line.
func (r *Reconciler) componentResources() []operatorv1.RelatedResourceMeta {
	var out []operatorv1.RelatedResourceMeta
	for _, name := range componentNames {
		out = append(out, operatorv1.RelatedResourceMeta{
			Group: coordinationv1.GroupName, Version: "v1", Resource: "leases", Namespace: r.Namespace, Name: name,
		})
	}
	return out
}

// renewComponents creates or renews the Lease of every component this
// process runs, and deletes the Lease of one it does not (the work webhook
// of a hub restarted without it). A Lease renewed less than renewInterval
// ago is left alone, so that reconciles for other reasons write nothing.
func (r *Reconciler) renewComponents(ctx context.Context) error {
	now := metav1.NewMicroTime(time.Now())
	running := map[string]bool{}
	for _, c := range r.components() {
		running[c.name] = true
		lease := &coordinationv1.Lease{}
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: c.name}, lease)
		if apierrors.IsNotFound(err) {
			lease = &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{
					Namespace: r.Namespace, Name: c.name,
					Labels:      map[string]string{"app.kubernetes.io/managed-by": "flotilla"},
					Annotations: map[string]string{RunsAnnotation: c.runs},
				},
				Spec: coordinationv1.LeaseSpec{
					HolderIdentity: ptr.To(r.Holder), LeaseDurationSeconds: ptr.To(int32(leaseDuration / time.Second)),
					AcquireTime: &now, RenewTime: &now,
				},
			}
			if err := r.Client.Create(ctx, lease); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("create Lease %s/%s: %w", r.Namespace, c.name, err)
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("read Lease %s/%s: %w", r.Namespace, c.name, err)
		}
		fresh := lease.Spec.RenewTime != nil && now.Sub(lease.Spec.RenewTime.Time) < renewInterval
		if fresh && ptr.Deref(lease.Spec.HolderIdentity, "") == r.Holder && lease.Annotations[RunsAnnotation] == c.runs {
			continue
		}
		patch := client.MergeFrom(lease.DeepCopy())
		if ptr.Deref(lease.Spec.HolderIdentity, "") != r.Holder {
			lease.Spec.HolderIdentity, lease.Spec.AcquireTime = ptr.To(r.Holder), &now
		}
		lease.Spec.RenewTime = &now
		lease.Spec.LeaseDurationSeconds = ptr.To(int32(leaseDuration / time.Second))
		if lease.Annotations == nil {
			lease.Annotations = map[string]string{}
		}
		lease.Annotations[RunsAnnotation] = c.runs
		if err := r.Client.Patch(ctx, lease, patch); err != nil {
			return fmt.Errorf("renew Lease %s/%s: %w", r.Namespace, c.name, err)
		}
	}
	for _, name := range componentNames {
		if running[name] {
			continue
		}
		lease := &coordinationv1.Lease{}
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: name}, lease)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err == nil {
			err = r.Client.Delete(ctx, lease)
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete Lease %s/%s of a component this hub does not run: %w", r.Namespace, name, err)
		}
	}
	return nil
}
