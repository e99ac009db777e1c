package clusterset

import (
	"strconv"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	"github.com/flotilla-io/flotilla/internal/kubeapply"
)

// The policies are evaluated by the API server itself, so that they hold
// without a webhook server and whichever process runs the controllers.
// Variables are evaluated lazily: the authorizer is asked only when the
// label really changes.
const (
	labelKey = "'" + clusterv1beta2.ClusterSetLabel + "'"
	// A missing or empty label counts as "default", the set the hub puts
	// such clusters in: labelling them so is no change.
	newSetExpr = "has(object.metadata.labels) && " + labelKey + " in object.metadata.labels && object.metadata.labels[" + labelKey + "] != '' ? " +
		"object.metadata.labels[" + labelKey + "] : '" + clusterv1beta2.DefaultManagedClusterSetName + "'"
	oldSetExpr = "oldObject != null && has(oldObject.metadata.labels) && " + labelKey + " in oldObject.metadata.labels && oldObject.metadata.labels[" + labelKey + "] != '' ? " +
		"oldObject.metadata.labels[" + labelKey + "] : '" + clusterv1beta2.DefaultManagedClusterSetName + "'"
	// On create, only an explicit label asks for a set.
	joinsExpr = "oldObject == null ? (has(object.metadata.labels) && " + labelKey + " in object.metadata.labels && object.metadata.labels[" + labelKey + "] != '') : " +
		"variables.newSet != variables.oldSet"
	leavesExpr = "oldObject != null && variables.newSet != variables.oldSet"

	setsAuthorizer = "authorizer.group('" + clusterGroup + "').resource('" + SetsResource + "')"
	mayJoinExpr    = setsAuthorizer + ".subresource('" + JoinSubresource + "').name(variables.newSet).check('create').allowed()"
	mayLeaveExpr   = setsAuthorizer + ".subresource('" + JoinSubresource + "').name(variables.oldSet).check('create').allowed()"

	joinMessageExpr = "'user ' + request.userInfo.username + ' may not add ManagedCluster ' + object.metadata.name + ' to ManagedClusterSet ' + " +
		"variables.newSet + ': it needs permission to create " + SetsResource + "/" + JoinSubresource + " (resource name ' + variables.newSet + ') in API group " + clusterGroup + "'"
	leaveMessageExpr = "'user ' + request.userInfo.username + ' may not take ManagedCluster ' + object.metadata.name + ' out of ManagedClusterSet ' + " +
		"variables.oldSet + ': it needs permission to create " + SetsResource + "/" + JoinSubresource + " (resource name ' + variables.oldSet + ') in API group " + clusterGroup + "'"

	bindingNameExpr    = "has(object.spec.clusterSet) && object.spec.clusterSet == object.metadata.name"
	bindingNameMessage = "'ManagedClusterSetBinding ' + object.metadata.name + ' must be named after the set it binds: set spec.clusterSet to ' + object.metadata.name"
	bindsExpr          = "oldObject == null || !has(oldObject.spec.clusterSet) || oldObject.spec.clusterSet != object.spec.clusterSet"
	mayBindExpr        = setsAuthorizer + ".subresource('" + BindSubresource + "').name(object.spec.clusterSet).check('create').allowed()"
	bindMessageExpr    = "'user ' + request.userInfo.username + ' may not bind ManagedClusterSet ' + object.spec.clusterSet + ' to namespace ' + " +
		"object.metadata.namespace + ': it needs permission to create " + SetsResource + "/" + BindSubresource + " (resource name ' + object.spec.clusterSet + ') in API group " + clusterGroup + "'"
)

const clusterGroup = "cluster.open-cluster-management.io"

// exemptExpr passes system:masters and, when known, the hub's own user.
func exemptExpr(hubUser string) string {
	expr := "has(request.userInfo.groups) && 'system:masters' in request.userInfo.groups"
	if hubUser != "" {
		expr += " || request.userInfo.username == " + strconv.Quote(hubUser)
	}
	return expr
}

// joinPolicy guards the clusterset label of ManagedClusters.
func joinPolicy(hubUser string) *admissionregistrationv1.ValidatingAdmissionPolicy {
	return &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: JoinPolicyName},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: kubeapply.Match(clusterv1.GroupVersion.Group, []string{"managedclusters"}, admissionregistrationv1.Create, admissionregistrationv1.Update),
			Variables: []admissionregistrationv1.Variable{
				{Name: "newSet", Expression: newSetExpr},
				{Name: "oldSet", Expression: oldSetExpr},
				{Name: "joins", Expression: joinsExpr},
				{Name: "leaves", Expression: leavesExpr},
				{Name: "exempt", Expression: exemptExpr(hubUser)},
			},
			Validations: []admissionregistrationv1.Validation{
				{
					Expression:        "!variables.joins || variables.exempt || " + mayJoinExpr,
					MessageExpression: joinMessageExpr,
					Message:           "adding a ManagedCluster to a ManagedClusterSet needs permission to create " + SetsResource + "/" + JoinSubresource + " for that set",
					Reason:            ptr.To(metav1.StatusReasonForbidden),
				},
				{
					Expression:        "!variables.leaves || variables.exempt || " + mayLeaveExpr,
					MessageExpression: leaveMessageExpr,
					Message:           "taking a ManagedCluster out of a ManagedClusterSet needs permission to create " + SetsResource + "/" + JoinSubresource + " for that set",
					Reason:            ptr.To(metav1.StatusReasonForbidden),
				},
			},
		},
	}
}

// bindPolicy guards ManagedClusterSetBindings.
func bindPolicy(hubUser string) *admissionregistrationv1.ValidatingAdmissionPolicy {
	return &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: BindPolicyName},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: kubeapply.Match(clusterv1beta2.GroupVersion.Group, []string{"managedclustersetbindings"}, admissionregistrationv1.Create, admissionregistrationv1.Update),
			Variables: []admissionregistrationv1.Variable{
				{Name: "binds", Expression: bindsExpr},
				{Name: "exempt", Expression: exemptExpr(hubUser)},
			},
			Validations: []admissionregistrationv1.Validation{
				{
					Expression:        bindingNameExpr,
					MessageExpression: bindingNameMessage,
					Message:           "a ManagedClusterSetBinding must be named after the set it binds (spec.clusterSet)",
					Reason:            ptr.To(metav1.StatusReasonInvalid),
				},
				{
					Expression:        "!variables.binds || variables.exempt || " + mayBindExpr,
					MessageExpression: bindMessageExpr,
					Message:           "binding a ManagedClusterSet needs permission to create " + SetsResource + "/" + BindSubresource + " for that set",
					Reason:            ptr.To(metav1.StatusReasonForbidden),
				},
			},
		},
	}
}
