package services

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/identity"
	"github.com/flotilla-io/flotilla/internal/kubeapply"
	"github.com/flotilla-io/flotilla/internal/mcs"
)

// The policy is evaluated by the API server itself (as registration's
// are), so that it holds without a webhook server. RBAC already keeps an
// agent to its cluster's namespace and away from the status; the CRD's
// own rule ties the name to spec.namespace and spec.name. What is left to
// check is what others select by: the labels.

// labelExpr reads label key of object, ” when absent.
func labelExpr(key string) string {
	return "(has(object.metadata.labels) && '" + key + "' in object.metadata.labels ? object.metadata.labels['" + key + "'] : '')"
}

// exportPolicy is the ValidatingAdmissionPolicy that lets a cluster's
// agent write only ExportedServices of its own namespace labelled with its
// own cluster (mcs.ClusterLabel equal to the namespace) and with the
// Service they describe (mcs.ServiceNamespaceLabel, mcs.ServiceNameLabel
// equal to spec.namespace and spec.name): a label claiming another
// cluster, or another service, is refused.
func exportPolicy() *admissionregistrationv1.ValidatingAdmissionPolicy {
	forbidden := ptr.To(metav1.StatusReasonForbidden)
	who := "'user ' + request.userInfo.username + ' is an agent of cluster ' + variables.clusters.join(', ') + ' and"
	return &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: ExportPolicyName},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			// The status subresource is the hub's (RBAC): not matched.
			MatchConstraints: kubeapply.Match(mcsv1alpha1.GroupVersion.Group, []string{"exportedservices"}, admissionregistrationv1.Create, admissionregistrationv1.Update),
			MatchConditions:  []admissionregistrationv1.MatchCondition{{Name: "cluster-agent", Expression: identity.IsClusterAgentCEL}},
			Variables: []admissionregistrationv1.Variable{
				{Name: "clusters", Expression: identity.RequesterClustersCEL},
				{Name: "labelCluster", Expression: labelExpr(mcs.ClusterLabel)},
				{Name: "svcNamespace", Expression: labelExpr(mcs.ServiceNamespaceLabel)},
				{Name: "svcName", Expression: labelExpr(mcs.ServiceNameLabel)},
			},
			Validations: []admissionregistrationv1.Validation{
				{
					Expression:        "object.metadata.namespace in variables.clusters",
					MessageExpression: who + " may write ExportedServices only in its own namespace, ' + variables.clusters[0] + ', not ' + object.metadata.namespace",
					Message:           "cluster agents may write ExportedServices only in their own cluster's namespace",
					Reason:            forbidden,
				},
				{
					Expression: "variables.labelCluster == object.metadata.namespace",
					MessageExpression: who + " may publish only its own exports: label " + mcs.ClusterLabel + " of ExportedService ' + object.metadata.namespace + '/' + object.metadata.name + " +
						"' must be ' + object.metadata.namespace + ', not ' + (variables.labelCluster == '' ? 'missing' : variables.labelCluster)",
					Message: "the " + mcs.ClusterLabel + " label of an ExportedService must name the cluster of its namespace",
					Reason:  forbidden,
				},
				{
					// The CRD requires the name <spec.namespace>.<spec.name>, and
					// neither part holds a dot: comparing with the name is comparing
					// with both (and needs no escaped spec.namespace, which CEL
					// reads differently in admission than in the CRD).
					Expression: "variables.svcNamespace + '.' + variables.svcName == object.metadata.name",
					MessageExpression: "'labels " + mcs.ServiceNamespaceLabel + " and " + mcs.ServiceNameLabel + " of ExportedService ' + object.metadata.namespace + '/' + object.metadata.name + " +
						"' must be the namespace and name of its Service, as its name <namespace>.<name> says, not ' + variables.svcNamespace + ' and ' + variables.svcName",
					Message: "the service labels of an ExportedService must be its spec.namespace and spec.name",
					Reason:  ptr.To(metav1.StatusReasonInvalid),
				},
			},
		},
	}
}
