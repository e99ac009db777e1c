package registration

import (
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/internal/identity"
	"github.com/flotilla-io/flotilla/internal/kubeapply"
)

// AgentAnnotationPrefix begins the only annotations of its ManagedCluster
// that a cluster's agent may change (OCM's own prefix for them).
const AgentAnnotationPrefix = "agent.open-cluster-management.io/"

// agentGuardedField is a part of a ManagedCluster that its agent may not change.
type agentGuardedField struct {
	// name is how messages name it.
	name string
	// old and new read the field from oldObject and object, defaulting
	// when it is absent so that absent and empty compare equal.
	old, new string
	// who says who may change it instead.
	who string
}

// fieldOf reads path (dot separated below obj) as CEL, or def when any
// part of it is absent.
func fieldOf(obj, parent, field, def string) string {
	p := obj + "." + parent
	return fmt.Sprintf("(has(%s) && has(%s.%s) ? %s.%s : %s)", p, p, field, p, field, def)
}

// agentGuardedFields are the ManagedCluster fields that decide what a
// cluster is given, and so only the hub's side may set.
func agentGuardedFields() []agentGuardedField {
	admin := "a hub admin (a user allowed to update managedclusters who is not a cluster agent)"
	field := func(name, parent, f, def, who string) agentGuardedField {
		return agentGuardedField{name: name, old: fieldOf("oldObject", parent, f, def), new: fieldOf("object", parent, f, def), who: who}
	}
	return []agentGuardedField{
		field("metadata.labels", "metadata", "labels", "{}", admin),
		// Taints compare by key, value and effect: a client sends an unset
		// timeAdded as null, which the stored object lacks.
		projected(field("spec.taints", "spec", "taints", "[]", admin+" or the hub registration controller"),
			"t", "t.key + '=' + (has(t.value) ? t.value : '') + ':' + t.effect"),
		field("spec.hubAcceptsClient", "spec", "hubAcceptsClient", "false",
			"a user allowed to update "+ManagedClustersResource+"/"+AcceptSubresource+" in API group "+RegisterGroup+" (flotilla accept), or to deny, a hub admin"),
		field("spec.leaseDurationSeconds", "spec", "leaseDurationSeconds", "0", admin),
		field("spec.managedClusterClientConfigs", "spec", "managedClusterClientConfigs", "[]",
			admin+"; the agent sets it only when it creates the ManagedCluster with its bootstrap identity"),
		// The hub's finalizer holds the cluster until its RBAC, namespace
		// and works are cleaned up; an agent that removed it would leave
		// them behind.
		field("metadata.finalizers", "metadata", "finalizers", "[]",
			"the hub, which removes "+ClusterFinalizer+" once it has removed what it created for the cluster, or a hub admin"),
	}
}

// projected compares f by expr of each of its elements, named v.
func projected(f agentGuardedField, v, expr string) agentGuardedField {
	f.old = f.old + ".map(" + v + ", " + expr + ")"
	f.new = f.new + ".map(" + v + ", " + expr + ")"
	return f
}

// annotationsExpr compares the annotations outside AgentAnnotationPrefix
// of object and oldObject: every such key of one is in the other with the
// same value.
func annotationsExpr() string {
	anns := func(obj string) string { return fieldOf(obj, "metadata", "annotations", "{}") }
	same := func(a, b string) string {
		return fmt.Sprintf("%s.all(k, k.startsWith('%s') || (k in %s && %s[k] == %s[k]))", a, AgentAnnotationPrefix, b, b, a)
	}
	return same(anns("object"), anns("oldObject")) + " && " + same(anns("oldObject"), anns("object"))
}

// agentMessage is the CEL message of a refused change to field.
func agentMessage(field, who string) string {
	return "'user ' + request.userInfo.username + ' is a cluster agent and may not change " + field +
		" of ManagedCluster ' + object.metadata.name + ': only " + who + " may change it'"
}

// agentClusterPolicy is the ValidatingAdmissionPolicy that keeps a
// cluster's agent to its ManagedCluster's status: through the object
// itself it may change only annotations with AgentAnnotationPrefix.
// Agents create no ManagedCluster with their own identity (RBAC gives them
// no create); their bootstrap identity, which does, is not matched.
func agentClusterPolicy() *admissionregistrationv1.ValidatingAdmissionPolicy {
	var validations []admissionregistrationv1.Validation
	for _, f := range agentGuardedFields() {
		validations = append(validations, admissionregistrationv1.Validation{
			Expression:        f.new + " == " + f.old,
			MessageExpression: agentMessage(f.name, f.who),
			Message:           "cluster agents may not change " + f.name + " of a ManagedCluster",
			Reason:            ptr.To(metav1.StatusReasonForbidden),
		})
	}
	validations = append(validations, admissionregistrationv1.Validation{
		Expression: annotationsExpr(),
		MessageExpression: agentMessage("metadata.annotations other than those beginning with "+AgentAnnotationPrefix,
			"a hub admin (a user allowed to update managedclusters who is not a cluster agent)"),
		Message: "cluster agents may change only the annotations beginning with " + AgentAnnotationPrefix + " of a ManagedCluster",
		Reason:  ptr.To(metav1.StatusReasonForbidden),
	})
	return &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: AgentClusterPolicyName},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: kubeapply.Match(clusterv1.GroupVersion.Group, []string{"managedclusters"}, admissionregistrationv1.Update),
			MatchConditions:  []admissionregistrationv1.MatchCondition{{Name: "cluster-agent", Expression: identity.IsClusterAgentCEL}},
			Validations:      validations,
		},
	}
}

// agentCSRPolicy is the ValidatingAdmissionPolicy that lets a cluster's
// agent create only CSRs labelled with its own cluster and for a user of
// its own cluster. Bootstrap identities, which join new clusters, are not
// matched. The certificate request's subject itself (DER, out of CEL's
// reach) is checked by CSRSubjectAdmission where the hub embeds its API
// server, and by every approver (the renewal approver and flotilla
// accept) everywhere.
func agentCSRPolicy() *admissionregistrationv1.ValidatingAdmissionPolicy {
	label := "open-cluster-management.io/cluster-name"
	labelOf := "(has(object.metadata.labels) && '" + label + "' in object.metadata.labels ? object.metadata.labels['" + label + "'] : '')"
	return &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: AgentCSRPolicyName},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: kubeapply.Match(certificatesv1.GroupName, []string{"certificatesigningrequests"}, admissionregistrationv1.Create),
			MatchConditions:  []admissionregistrationv1.MatchCondition{{Name: "cluster-agent", Expression: identity.IsClusterAgentCEL}},
			Variables: []admissionregistrationv1.Variable{
				{Name: "clusters", Expression: identity.RequesterClustersCEL},
				{Name: "label", Expression: labelOf},
			},
			Validations: []admissionregistrationv1.Validation{{
				Expression: "variables.label in variables.clusters",
				MessageExpression: "'user ' + request.userInfo.username + ' is an agent of cluster ' + variables.clusters.join(', ') + " +
					"' and may create only CSRs labelled " + label + "=' + variables.clusters[0] + ', not ' + (variables.label == '' ? 'unlabelled ones' : variables.label)",
				Message: "cluster agents may create only CSRs labelled with their own cluster",
				Reason:  ptr.To(metav1.StatusReasonForbidden),
			}},
		},
	}
}
