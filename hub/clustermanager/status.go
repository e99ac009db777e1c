package clustermanager

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1 "github.com/flotilla-io/flotilla/api/operator/v1"
)

// Condition types and reasons, OCM's where OCM has them.
const (
	ConditionApplied                 = "Applied"
	ConditionProgressing             = "Progressing"
	ConditionHubRegistrationDegraded = "HubRegistrationDegraded"
	ConditionHubPlacementDegraded    = "HubPlacementDegraded"

	ReasonApplied                = "ClusterManagerApplied"
	ReasonCRDsNotEstablished     = "CRDsNotEstablished"
	ReasonUpToDate               = "ClusterManagerUpToDate"
	ReasonRegistrationFunctional = "RegistrationFunctional"
	ReasonPlacementFunctional    = "PlacementFunctional"
)

// status is the ClusterManager status for a hub whose CRDs in missing are
// not established yet. Conditions keep their transition times while their
// status holds.
func (r *Reconciler) status(cm *operatorv1.ClusterManager, missing []string) operatorv1.ClusterManagerStatus {
	s := operatorv1.ClusterManagerStatus{
		ObservedGeneration: cm.Generation,
		Conditions:         slices.Clone(cm.Status.Conditions),
	}
	for _, name := range r.Want {
		s.RelatedResources = append(s.RelatedResources, operatorv1.RelatedResourceMeta{
			Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions", Name: name,
		})
	}
	applied := metav1.Condition{
		Type: ConditionApplied, Status: metav1.ConditionTrue, Reason: ReasonApplied,
		Message: fmt.Sprintf("Flotilla hub %s serves the %d CRDs of its APIs, and its controllers run", r.Version, len(r.Want)),
	}
	if len(missing) > 0 {
		applied.Status, applied.Reason = metav1.ConditionFalse, ReasonCRDsNotEstablished
		applied.Message = fmt.Sprintf("%d of the hub's CRDs are not established: %s; the hub installs them at start (flotilla-hub logs say why one failed)", len(missing), strings.Join(missing, ", "))
	}
	for _, c := range []metav1.Condition{
		applied,
		{Type: ConditionProgressing, Status: metav1.ConditionFalse, Reason: ReasonUpToDate, Message: "Flotilla hub " + r.Version + " is running; nothing is being rolled out"},
		{Type: ConditionHubRegistrationDegraded, Status: metav1.ConditionFalse, Reason: ReasonRegistrationFunctional, Message: "the registration controllers run in the hub process that writes this status"},
		{Type: ConditionHubPlacementDegraded, Status: metav1.ConditionFalse, Reason: ReasonPlacementFunctional, Message: "the placement controllers run in the hub process that writes this status"},
	} {
		c.ObservedGeneration = cm.Generation
		meta.SetStatusCondition(&s.Conditions, c)
	}
	return s
}
