package addon

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
)

// own gives every ManagedClusterAddOn of a managed add-on a controller
// ownerReference to its ClusterManagementAddOn: deleting the add-on then
// removes its installs, and addon-framework managers act only on
// ManagedClusterAddOns that have it. One controlled by something else
// is left so (the API server allows a single controller).
func (r *Reconciler) own(_ context.Context, s *scope) (ctrl.Result, error) {
	if !s.managed {
		return ctrl.Result{}, nil
	}
	for _, mca := range s.live() {
		if metav1.GetControllerOfNoCopy(mca) == nil {
			mca.OwnerReferences = append(mca.OwnerReferences, ownerRef(s.cma))
		}
	}
	return ctrl.Result{}, nil
}

// ownerRef is the controller ownerReference to cma.
func ownerRef(cma *addonv1alpha1.ClusterManagementAddOn) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: addonv1alpha1.GroupVersion.String(), Kind: "ClusterManagementAddOn",
		Name: cma.Name, UID: cma.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}
}
