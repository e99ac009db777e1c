package registration

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/internal/identity"
)

// leaseFlowSchemaName names the FlowSchema that puts the agents' lease
// renewals ahead of their other requests.
const leaseFlowSchemaName = "flotilla-cluster-leases"

// leaseFlowSchema sends every agent's lease requests to the API server's
// "node-high" priority level, where the kubelets' node leases go, rather
// than to "global-default" with the agents' work and policy traffic. The
// hub judges a cluster available by its lease alone: when the hub is
// saturated (a ManifestWorkReplicaSet fanning out to thousands of
// clusters), heartbeats waiting behind status writes made clusters look
// unreachable, which dropped them from Placements and made more work.
// Each agent is a flow of its own, so one cannot crowd out the others.
func leaseFlowSchema() *flowcontrolv1.FlowSchema {
	return &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: leaseFlowSchemaName},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "node-high"},
			// After system-node-high (400), before system-nodes (500):
			// neither matches agents.
			MatchingPrecedence:  450,
			DistinguisherMethod: &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects: []flowcontrolv1.Subject{{
					Kind:  flowcontrolv1.SubjectKindGroup,
					Group: &flowcontrolv1.GroupSubject{Name: identity.ManagedClustersGroup},
				}},
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{
					Verbs:      []string{flowcontrolv1.VerbAll},
					APIGroups:  []string{"coordination.k8s.io"},
					Resources:  []string{"leases"},
					Namespaces: []string{flowcontrolv1.NamespaceEvery},
				}},
			}},
		},
	}
}
