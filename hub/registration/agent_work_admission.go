package registration

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/internal/identity"
	"github.com/flotilla-io/flotilla/internal/kubeapply"
)

// workAuthor says who may change what a cluster's agent may not on a
// ManifestWork: whoever wrote the work.
const workAuthor = "the author of the work (a user allowed to update manifestworks who is not a cluster agent)"

// agentWorkUpdate is true unless the request is an UPDATE: the checks of
// the work's fields read object, which a DELETE lacks.
const agentWorkUpdate = "request.operation != 'UPDATE' || "

// agentWorkGuardedFields are the parts of a ManifestWork that say what its
// cluster runs and how the hub's side finds it: the agent reads them and
// writes only the status (through its subresource, which this policy does
// not match) and its own finalizer.
func agentWorkGuardedFields() []agentGuardedField {
	field := func(name, parent, f, def string) agentGuardedField {
		return agentGuardedField{name: name, old: fieldOf("oldObject", parent, f, def), new: fieldOf("object", parent, f, def), who: workAuthor}
	}
	// The agent's finalizer is the one finalizer it may add and remove;
	// every other one is compared.
	others := func(f agentGuardedField) agentGuardedField {
		keep := ".filter(f, f != '" + workv1.ManifestWorkFinalizer + "')"
		f.old, f.new = f.old+keep, f.new+keep
		return f
	}
	return []agentGuardedField{
		// spec is compared whole: the manifests, their configs, the
		// executor and deleteOption.
		{name: "spec", old: "(has(oldObject.spec) ? [oldObject.spec] : [])", new: "(has(object.spec) ? [object.spec] : [])", who: workAuthor},
		field("metadata.labels", "metadata", "labels", "{}"),
		field("metadata.annotations", "metadata", "annotations", "{}"),
		field("metadata.ownerReferences", "metadata", "ownerReferences", "[]"),
		others(field("metadata.finalizers other than "+workv1.ManifestWorkFinalizer, "metadata", "finalizers", "[]")),
	}
}

// agentWorkMessage is the CEL message of a refused change to field.
func agentWorkMessage(field, who string) string {
	return "'user ' + request.userInfo.username + ' is a cluster agent and may not change " + field +
		" of ManifestWork ' + oldObject.metadata.namespace + '/' + oldObject.metadata.name + ': only " + who +
		" may change it; the agent writes the status and its " + workv1.ManifestWorkFinalizer + " finalizer'"
}

// agentMayDeleteExpr is the one deletion an agent makes: of a work that
// asked for it with deleteOption.ttlSecondsAfterFinished, once the agent
// has reported it Complete (agent/work/expire.go). CEL has no clock, so
// the policy cannot check that the time has passed; it keeps the agent
// from deleting any work that did not ask to be deleted.
const agentMayDeleteExpr = "request.operation != 'DELETE' || (" +
	"has(oldObject.spec) && has(oldObject.spec.deleteOption) && has(oldObject.spec.deleteOption.ttlSecondsAfterFinished) && " +
	"has(oldObject.status) && has(oldObject.status.conditions) && " +
	"oldObject.status.conditions.exists(c, c.type == '" + workv1.WorkComplete + "' && c.status == 'True'))"

// agentWorkPolicy is the ValidatingAdmissionPolicy that keeps a cluster's
// agent to what is its own on the ManifestWorks of its namespace: their
// status and its finalizer. RBAC lets it update and delete them (OCM's
// agent adds its finalizer with an update; Flotilla's deletes expired
// works); this policy refuses every other change, naming the field, and
// every deletion but an expired one's. Agents create no works (RBAC).
func agentWorkPolicy() *admissionregistrationv1.ValidatingAdmissionPolicy {
	var validations []admissionregistrationv1.Validation
	for _, f := range agentWorkGuardedFields() {
		validations = append(validations, admissionregistrationv1.Validation{
			Expression:        agentWorkUpdate + f.new + " == " + f.old,
			MessageExpression: agentWorkMessage(f.name, f.who),
			Message:           "cluster agents may not change " + f.name + " of a ManifestWork",
			Reason:            ptr.To(metav1.StatusReasonForbidden),
		})
	}
	validations = append(validations, admissionregistrationv1.Validation{
		Expression: agentMayDeleteExpr,
		MessageExpression: "'user ' + request.userInfo.username + ' is a cluster agent and may not delete ManifestWork ' + " +
			"oldObject.metadata.namespace + '/' + oldObject.metadata.name + ': only " + workAuthor +
			" may delete it; the agent deletes only a work it reported " + workv1.WorkComplete +
			" whose spec.deleteOption.ttlSecondsAfterFinished asks for it'",
		Message: "cluster agents may delete only a Complete ManifestWork with spec.deleteOption.ttlSecondsAfterFinished",
		Reason:  ptr.To(metav1.StatusReasonForbidden),
	})
	return &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: AgentWorkPolicyName},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			// The status subresource is the agent's: not matched.
			MatchConstraints: kubeapply.Match(workv1.GroupName, []string{"manifestworks"}, admissionregistrationv1.Update, admissionregistrationv1.Delete),
			MatchConditions:  []admissionregistrationv1.MatchCondition{{Name: "cluster-agent", Expression: identity.IsClusterAgentCEL}},
			Validations:      validations,
		},
	}
}
