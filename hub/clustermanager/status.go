package clustermanager

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1 "github.com/flotilla-io/flotilla/api/operator/v1"
	"github.com/flotilla-io/flotilla/hub/bootstraptoken"
)

// Condition types and reasons, OCM's where OCM has them.
const (
	ConditionApplied                 = "Applied"
	ConditionProgressing             = "Progressing"
	ConditionHubRegistrationDegraded = "HubRegistrationDegraded"
	ConditionHubPlacementDegraded    = "HubPlacementDegraded"
	// ConditionJoinPathOpen is Flotilla's: whether a cluster can join.
	ConditionJoinPathOpen = "JoinPathOpen"

	ReasonApplied                = "ClusterManagerApplied"
	ReasonCRDsNotEstablished     = "CRDsNotEstablished"
	ReasonUpToDate               = "ClusterManagerUpToDate"
	ReasonRegistrationFunctional = "RegistrationFunctional"
	ReasonPlacementFunctional    = "PlacementFunctional"
	ReasonBootstrapRoleInstalled = "BootstrapClusterRoleInstalled"
	ReasonBootstrapRoleMissing   = "BootstrapClusterRoleMissing"
)

// status is the ClusterManager status for a hub whose CRDs in missing are
// not established yet, and whose join path is open or not. Conditions keep
// their transition times while their status holds.
func (r *Reconciler) status(cm *operatorv1.ClusterManager, missing []string, joinOpen bool) operatorv1.ClusterManagerStatus {
	s := operatorv1.ClusterManagerStatus{
		ObservedGeneration: cm.Generation,
		Conditions:         slices.Clone(cm.Status.Conditions),
	}
	for _, name := range r.Want {
		s.RelatedResources = append(s.RelatedResources, operatorv1.RelatedResourceMeta{
			Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions", Name: name,
		})
	}
	s.RelatedResources = append(s.RelatedResources, r.componentResources()...)
	applied := metav1.Condition{
		Type: ConditionApplied, Status: metav1.ConditionTrue, Reason: ReasonApplied,
		Message: fmt.Sprintf("Flotilla hub %s serves the %d CRDs of its APIs, and its controllers run", r.Version, len(r.Want)),
	}
	if len(missing) > 0 {
		applied.Status, applied.Reason = metav1.ConditionFalse, ReasonCRDsNotEstablished
		applied.Message = fmt.Sprintf("%d of the hub's CRDs are not established: %s; the hub installs them at start (flotilla-hub logs say why one failed)", len(missing), strings.Join(missing, ", "))
	}
	join := metav1.Condition{
		Type: ConditionJoinPathOpen, Status: metav1.ConditionTrue, Reason: ReasonBootstrapRoleInstalled,
		Message: "the ClusterRole " + bootstraptoken.ClusterRoleName + " lets join tokens and the bootstrap ServiceAccount join; the hub rotates a join token",
	}
	if !joinOpen {
		join.Status, join.Reason, join.Message = metav1.ConditionFalse, ReasonBootstrapRoleMissing, bootstraptoken.ClosedMessage
	}
	for _, c := range []metav1.Condition{
		applied, join,
		{Type: ConditionProgressing, Status: metav1.ConditionFalse, Reason: ReasonUpToDate, Message: "Flotilla hub " + r.Version + " is running; nothing is being rolled out"},
		{Type: ConditionHubRegistrationDegraded, Status: metav1.ConditionFalse, Reason: ReasonRegistrationFunctional, Message: "the registration controllers run in the hub process that writes this status"},
		{Type: ConditionHubPlacementDegraded, Status: metav1.ConditionFalse, Reason: ReasonPlacementFunctional, Message: "the placement controllers run in the hub process that writes this status"},
	} {
		c.ObservedGeneration = cm.Generation
		meta.SetStatusCondition(&s.Conditions, c)
	}
	return s
}
