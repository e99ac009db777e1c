package addon

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/addon"
)

// hubConditions says on a ManagedClusterAddOn when nothing will deploy
// it, in ManifestApplied, the condition clusteradm shows: no
// ClusterManagementAddOn declares the add-on, or the add-on is no template
// add-on and no add-on manager has written anything on it yet. Once a
// manager writes, or the add-on is run by its own manager (lifecycle
// other than addon-manager), the hub takes its condition back.
func (r *Reconciler) hubConditions(_ context.Context, s *scope) (ctrl.Result, error) {
	for _, mca := range s.live() {
		mca.Status.Conditions = hubCondition(mca, s.cma, s.managed, isTemplate(s.desired[mca.Namespace]))
	}
	return ctrl.Result{}, nil
}

// hubCondition is mca's conditions with the hub's ManifestApplied set or
// taken back; cma is nil when no ClusterManagementAddOn declares the
// add-on, template says the hub deploys it from an AddOnTemplate.
func hubCondition(mca *addonv1alpha1.ManagedClusterAddOn, cma *addonv1alpha1.ClusterManagementAddOn, managed, template bool) []metav1.Condition {
	conditions := append([]metav1.Condition(nil), mca.Status.Conditions...)
	var c metav1.Condition
	switch {
	case cma == nil:
		c = metav1.Condition{Reason: ReasonClusterManagementAddOnNotFound,
			Message: fmt.Sprintf("no ClusterManagementAddOn %q declares this add-on, so nothing installs it on cluster %q: create the ClusterManagementAddOn, or delete this ManagedClusterAddOn", mca.Name, mca.Namespace)}
	case managed && !template && !managerWrote(mca):
		c = metav1.Condition{Reason: ReasonAddOnManagerNotRunning,
			Message: fmt.Sprintf("add-on %q is no template add-on (its configs name no addontemplates), and no add-on manager has written anything on this ManagedClusterAddOn yet: "+
				"run the add-on's own manager against this hub, or give ClusterManagementAddOn %s a default addontemplates config", mca.Name, mca.Name)}
	default:
		if cur := meta.FindStatusCondition(conditions, ConditionManifestApplied); cur != nil && ours(cur.Reason) {
			meta.RemoveStatusCondition(&conditions, ConditionManifestApplied)
		}
		return conditions
	}
	c.Type, c.Status, c.ObservedGeneration = ConditionManifestApplied, metav1.ConditionFalse, mca.Generation
	meta.SetStatusCondition(&conditions, c)
	return conditions
}

// managerWrote says whether an add-on manager wrote on mca: the fields
// and conditions only a deploying manager writes.
func managerWrote(mca *addonv1alpha1.ManagedClusterAddOn) bool {
	return len(mca.Status.SupportedConfigs) > 0 || len(mca.Status.Registrations) > 0 ||
		deployerWrote(mca, addon.ConditionManifestApplied) || meta.FindStatusCondition(mca.Status.Conditions, addon.ConditionRegistrationApplied) != nil
}

func ours(reason string) bool {
	return reason == ReasonAddOnManagerNotRunning || reason == ReasonClusterManagementAddOnNotFound
}
