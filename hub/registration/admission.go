package registration

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/internal/identity"
	"github.com/flotilla-io/flotilla/internal/kubeapply"
)

// The policy is evaluated by the API server itself, so that it holds
// without a webhook server and whichever process runs the controllers.
// Only a change to true is guarded (creating an accepted cluster, or
// accepting one), as OCM does: setting it back to false denies a cluster
// and needs no more than update on the ManagedCluster.
const (
	acceptsExpr     = "has(object.spec) && has(object.spec.hubAcceptsClient) && object.spec.hubAcceptsClient"
	wasAcceptedExpr = "oldObject != null && has(oldObject.spec) && has(oldObject.spec.hubAcceptsClient) && oldObject.spec.hubAcceptsClient"
	// Variables are evaluated lazily: the authorizer is asked only when
	// the field turns true.
	mayAcceptExpr = "authorizer.group('" + RegisterGroup + "').resource('" + ManagedClustersResource + "')" +
		".subresource('" + AcceptSubresource + "').name(object.metadata.name).check('update').allowed()"
	acceptRuleExpr = "!variables.accepts || variables.wasAccepted || variables.mayAccept"
	// The accepted agent decides who holds the cluster's access: setting,
	// changing or removing it is accepting an agent.
	agentExpr        = "has(object.metadata.annotations) && '" + identity.AcceptedAgentAnnotation + "' in object.metadata.annotations ? object.metadata.annotations['" + identity.AcceptedAgentAnnotation + "'] : ''"
	oldAgentExpr     = "oldObject != null && has(oldObject.metadata.annotations) && '" + identity.AcceptedAgentAnnotation + "' in oldObject.metadata.annotations ? oldObject.metadata.annotations['" + identity.AcceptedAgentAnnotation + "'] : ''"
	agentRuleExpr    = "variables.agent == variables.oldAgent || variables.mayAccept"
	agentMessageExpr = "'user ' + request.userInfo.username + ' may not set annotation " + identity.AcceptedAgentAnnotation + " on ManagedCluster ' + " +
		"object.metadata.name + ': it names the agent that holds the access of the cluster, and needs permission to update " + ManagedClustersResource + "/" + AcceptSubresource +
		" in API group " + RegisterGroup + "'"
	acceptMessageExpr = "'user ' + request.userInfo.username + ' may not set spec.hubAcceptsClient to true on ManagedCluster ' + " +
		"object.metadata.name + ': it needs permission to update " + ManagedClustersResource + "/" + AcceptSubresource +
		" in API group " + RegisterGroup + "'"
)

// acceptPolicy is the ValidatingAdmissionPolicy that lets only users allowed
// update on managedclusters/accept set spec.hubAcceptsClient to true, or
// set or change the cluster's accepted agent.
func acceptPolicy() *admissionregistrationv1.ValidatingAdmissionPolicy {
	return &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: AcceptPolicyName},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: kubeapply.Match(clusterv1.GroupVersion.Group, []string{"managedclusters"}, admissionregistrationv1.Create, admissionregistrationv1.Update),
			Variables: []admissionregistrationv1.Variable{
				{Name: "accepts", Expression: acceptsExpr},
				{Name: "wasAccepted", Expression: wasAcceptedExpr},
				{Name: "mayAccept", Expression: mayAcceptExpr},
				{Name: "agent", Expression: agentExpr},
				{Name: "oldAgent", Expression: oldAgentExpr},
			},
			Validations: []admissionregistrationv1.Validation{{
				Expression:        acceptRuleExpr,
				MessageExpression: acceptMessageExpr,
				Message:           "spec.hubAcceptsClient may be set to true only by users allowed to update " + ManagedClustersResource + "/" + AcceptSubresource + " in API group " + RegisterGroup,
				Reason:            ptr.To(metav1.StatusReasonForbidden),
			}, {
				Expression:        agentRuleExpr,
				MessageExpression: agentMessageExpr,
				Message:           "annotation " + identity.AcceptedAgentAnnotation + " may be set only by users allowed to update " + ManagedClustersResource + "/" + AcceptSubresource + " in API group " + RegisterGroup,
				Reason:            ptr.To(metav1.StatusReasonForbidden),
			}},
		},
	}
}
